MST-REDUCE(G, orig, c, T)
    for each @vertex v in G.V@
        $v.mark = FALSE$
        MAKE-SET(v)
    for each @vertex u in G.V@
        if $u.mark == FALSE$
            @choose a neighbour v of u such that c(u, v) is as small as possible@
            UNION(u, v)
            $T = T ∪ {orig(u, v)}$
            $u.mark = TRUE$
            $v.mark = TRUE$
    $V' = {FIND-SET(v) : v ∈ G.V}$
    $E' = ∅$
    for each @edge (x, y) in G.E@
        $u = FIND-SET(x)$
        $v = FIND-SET(y)$
        if $u ≠ v$
            if $(u, v) ∉ E'$
                $E' = E' ∪ {(u, v)}$
                $orig'(u, v) = orig(x, y)$
                $c'(u, v) = c(x, y)$
            elseif $c(x, y) < c'(u, v)$
                $orig'(u, v) = orig(x, y)$
                $c'(u, v) = c(x, y)$
    @construct the graph G' from the vertex set V' and the edge set E'@
    return $G', orig', c', T$
