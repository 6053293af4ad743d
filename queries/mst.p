GENERIC-MST(G, w)
    $A = ∅$
    while @A does not yet form a spanning tree@
        @find an edge (u, v) that is safe for A@
        $A = A ∪ {(u, v)}$
    return $A$
