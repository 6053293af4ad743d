PIVOT(N, B, A, b, c, v, l, e)
    @let Â be a new m × n matrix@
    $b̂_e = b_l / a_le$
    for each $j ∈ N - {e}$
        $â_ej = a_lj / a_le$
    $â_el = 1 / a_le$
    for each $i ∈ B - {l}$
        $b̂_i = b_i - a_ie · b̂_e$
        for each $j ∈ N - {e}$
            $â_ij = a_ij - a_ie · â_ej$
        $â_il = -a_ie · â_el$
    $v̂ = v + c_e · b̂_e$
    for each $j ∈ N - {e}$
        $ĉ_j = c_j - c_e · â_ej$
    $ĉ_l = -c_e · â_el$
    $N̂ = (N - {e}) ∪ {l}$
    $B̂ = (B - {l}) ∪ {e}$
    return $(N̂, B̂, Â, b̂, ĉ, v̂)$
