STRONGLY-CONNECTED-COMPONENTS(G)
    @call DFS(G) to compute the finishing time u.f of each vertex u@
    @create the transpose graph G^T@
    @call DFS(G^T), taking the vertices in the main loop in order of decreasing u.f@
    @output the vertices of each tree of the resulting depth-first forest as one component@
