COMPUTE-TRANSITION-FUNCTION(P, Σ, m) {
    for $q = 0$ to $m$ {
        for each @character a of the alphabet Σ@ {
            $k = min(m, q + 1)$
            while @P[1 : k] is not a suffix of the string P[1 : q] followed by a@ {
                $k = k - 1$
            }
            $δ(q, a) = k$
        }
    }
    return $δ$
}
