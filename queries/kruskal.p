MST-KRUSKAL(G, w)
    $A = ∅$
    for each @vertex v in G.V@
        MAKE-SET(v)
    @create a single list of the edges in G.E@
    @sort the list of edges into monotonically increasing order by weight w@
    for each @edge (u, v) taken from the sorted list in order@
        if $FIND-SET(u) ≠ FIND-SET(v)$
            $A = A ∪ {(u, v)}$
            UNION(u, v)
    return $A$
