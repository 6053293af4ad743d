EDMONDS-KARP(G, s, t)
    for each @edge (u, v) in G.E@
        $(u, v).f = 0$
    while @there is a path p from s to t in the residual network G_f@
        @let p be a shortest such path, found by breadth-first search@
        $c_f(p) = min{c_f(u, v) : (u, v) in p}$
        for each @edge (u, v) on the path p@
            if $(u, v) ∈ G.E$
                $(u, v).f = (u, v).f + c_f(p)$
            else
                $(v, u).f = (v, u).f - c_f(p)$
    return $f$
