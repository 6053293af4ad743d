QUICKSORT(A, p, r)
    if $p < r$
        $q = PARTITION(A, p, r)$   // the pivot ends up in A[q]
        QUICKSORT(A, p, q - 1)
        QUICKSORT(A, q + 1, r)

PARTITION(A, p, r)
    $x = A[r]$
    $i = p - 1$
    for $j = p$ to $r - 1$
        if $A[j] ≤ x$
            $i = i + 1$
            @exchange A[i] with A[j]@
    @exchange A[i + 1] with A[r]@
    return $i + 1$
