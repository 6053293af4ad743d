BFS(G, s)
    for each @vertex u in G.V other than s@
        $u.color = WHITE$
        $u.d = ∞$
        $u.π = NIL$
    $s.color = GRAY$
    $s.d = 0$
    $s.π = NIL$
    $Q = ∅$
    ENQUEUE(Q, s)
    while $Q ≠ ∅$
        $u = DEQUEUE(Q)$
        for each @vertex v adjacent to u in G.Adj[u]@
            if $v.color == WHITE$
                $v.color = GRAY$
                $v.d = u.d + 1$
                $v.π = u$
                ENQUEUE(Q, v)
        $u.color = BLACK$
