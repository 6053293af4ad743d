HORNER(A, n, x)
    $p = 0$
    for $i = n$ downto $0$
        $p = A[i] + x · p$
    return $p$
