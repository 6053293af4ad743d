JOHNSON(G, w)
    @compute G', where G'.V = G.V ∪ {s} and G'.E adds an edge (s, v) of weight 0 for every v in G.V@
    if $BELLMAN-FORD(G', w, s) == FALSE$
        @print that the input graph contains a negative-weight cycle@
    else
        for each @vertex v in G'.V@
            $h(v) = v.d$   // v.d was computed by BELLMAN-FORD
        for each @edge (u, v) in G'.E@
            $ŵ(u, v) = w(u, v) + h(u) - h(v)$
        @let D be a new n × n matrix@
        for each @vertex u in G.V@
            DIJKSTRA(G, ŵ, u)
            for each @vertex v in G.V@
                $D[u][v] = δ̂(u, v) + h(v) - h(u)$
        return $D$
