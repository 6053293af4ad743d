TOPOLOGICAL-SORT(G)
    @call DFS(G) to compute the finishing time v.f of every vertex v@
    @as each vertex is finished, insert it onto the front of a linked list@
    return @the linked list of vertices@
