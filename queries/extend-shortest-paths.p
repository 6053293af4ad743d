EXTEND-SHORTEST-PATHS(L, W, n)
    @let L' be a new n × n matrix@
    for $i = 1$ to $n$
        for $j = 1$ to $n$
            $L'[i][j] = ∞$
            for $k = 1$ to $n$
                $L'[i][j] = min(L'[i][j], L[i][k] + W[k][j])$
    return $L'$
