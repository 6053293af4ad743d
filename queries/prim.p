MST-PRIM(G, w, r)
    for each @vertex u in G.V@
        $u.key = ∞$
        $u.π = NIL$
    $r.key = 0$
    $Q = ∅$
    for each @vertex u in G.V@
        INSERT(Q, u)
    while $Q ≠ ∅$
        $u = EXTRACT-MIN(Q)$   // add u to the tree
        for each @vertex v in G.Adj[u]@
            if $v ∈ Q$ and $w(u, v) < v.key$
                $v.π = u$
                $v.key = w(u, v)$
                DECREASE-KEY(Q, v, w(u, v))
