ANY-SEGMENTS-INTERSECT(S)
    @T is an empty ordered set of segments@
    @sort the endpoints of the segments in S from left to right, breaking ties by putting left endpoints first and then by lower y-coordinate@
    for each @point p in the sorted list of endpoints@
        if @p is the left endpoint of a segment s@
            INSERT(T, s)
            if $ABOVE(T, s) ≠ NIL$ and $INTERSECTS(ABOVE(T, s), s)$ or $BELOW(T, s) ≠ NIL$ and $INTERSECTS(BELOW(T, s), s)$
                return $TRUE$
        if @p is the right endpoint of a segment s@
            if $ABOVE(T, s) ≠ NIL$ and $BELOW(T, s) ≠ NIL$ and $INTERSECTS(ABOVE(T, s), BELOW(T, s))$
                return $TRUE$
            DELETE(T, s)
    return $FALSE$
