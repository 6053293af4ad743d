GRAHAM-SCAN(Q)
    @let p0 be the point of Q with the lowest y-coordinate, the leftmost one in case of a tie@
    @let p1, p2, ..., pm be the other points of Q sorted by polar angle around p0, keeping only the farthest point of each angle@
    @let S be an empty stack@
    PUSH(p0, S)
    PUSH(p1, S)
    PUSH(p2, S)
    for $i = 3$ to $m$
        while @the angle formed by NEXT-TO-TOP(S), TOP(S) and pi does not turn left@
            POP(S)
        PUSH(pi, S)
    return $S$
