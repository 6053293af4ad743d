DFS(G)
    for each @vertex u in G.V@
        $u.color = WHITE$
        $u.π = NIL$
    $time = 0$
    for each @vertex u in G.V@
        if $u.color == WHITE$
            DFS-VISIT(G, u)

DFS-VISIT(G, u)
    $time = time + 1$
    $u.d = time$
    $u.color = GRAY$
    for each @vertex v in G.Adj[u]@
        if $v.color == WHITE$
            $v.π = u$
            DFS-VISIT(G, v)
    $time = time + 1$
    $u.f = time$
    $u.color = BLACK$
