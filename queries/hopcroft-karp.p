HOPCROFT-KARP(G)
    $M = ∅$
    repeat
        @let P be a maximal set of vertex-disjoint shortest augmenting paths with respect to M@
        $M = M ⊕ (P_1 ∪ P_2 ∪ ... ∪ P_k)$
    until $P == ∅$
    return $M$
