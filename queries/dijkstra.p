DIJKSTRA(G, w, s)
    INITIALIZE-SINGLE-SOURCE(G, s)
    $S = ∅$
    $Q = ∅$
    for each @vertex u in G.V@
        INSERT(Q, u)
    while $Q ≠ ∅$
        $u = EXTRACT-MIN(Q)$
        $S = S ∪ {u}$
        for each @vertex v in G.Adj[u]@
            RELAX(u, v, w)
            if @the call to RELAX decreased v.d@
                DECREASE-KEY(Q, v, v.d)

INITIALIZE-SINGLE-SOURCE(G, s)
    for each @vertex v in G.V@
        $v.d = ∞$
        $v.π = NIL$
    $s.d = 0$

RELAX(u, v, w)
    if $v.d > u.d + w(u, v)$
        $v.d = u.d + w(u, v)$
        $v.π = u$
