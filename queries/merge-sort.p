MERGE-SORT(A, p, r)
    if $p ≥ r$
        return
    $q = ⌊(p + r) / 2⌋$
    MERGE-SORT(A, p, q)
    MERGE-SORT(A, q + 1, r)
    MERGE(A, p, q, r)

MERGE(A, p, q, r)
    $n_L = q - p + 1$
    $n_R = r - q$
    @let L[0 : n_L - 1] and R[0 : n_R - 1] be new arrays@
    @copy A[p : q] into L and A[q + 1 : r] into R@
    $i = 0$
    $j = 0$
    $k = p$
    while $i < n_L$ and $j < n_R$
        if $L[i] ≤ R[j]$
            $A[k] = L[i]$
            $i = i + 1$
        else
            $A[k] = R[j]$
            $j = j + 1$
        $k = k + 1$
    @copy whatever remains of L or R to the end of A[p : r]@
