APPROX-VERTEX-COVER(G)
    $C = ∅$
    $E' = G.E$
    while $E' ≠ ∅$
        @pick any edge (u, v) of E'@
        $C = C ∪ {u, v}$
        @delete from E' every edge that touches u or v@
    return $C$
