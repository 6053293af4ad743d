MAYBE-MST(G, w)
    @sort the edges into nonincreasing order of edge weight w@
    $T = E$
    for each @edge e taken in that sorted order@
        if @T - {e} is a connected graph@
            $T = T - {e}$
    return $T$
