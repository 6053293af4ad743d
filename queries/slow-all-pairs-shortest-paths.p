SLOW-APSP(W, L0, n)
    @let L = (l_ij) and M = (m_ij) be new n × n matrices@
    $L = L0$
    for $r = 1$ to $n - 1$
        $M = ∞$   // every entry starts at infinity
        EXTEND-SHORTEST-PATHS(L, W, M, n)
        $L = M$
    return $L$
