GAUSSIAN-ELIMINATION(A, b, n)
    for $k = 1$ to $n - 1$
        @find the row p ≥ k whose entry in column k has the largest absolute value@
        if $a_pk == 0$
            @report that the matrix is singular@
            return
        @swap rows k and p of A and entries k and p of b@
        for $i = k + 1$ to $n$
            $f = a_ik / a_kk$
            for $j = k$ to $n$
                $a_ij = a_ij - f · a_kj$
            $b_i = b_i - f · b_k$
    for $i = n$ downto $1$
        $x_i = (b_i - Σ_{j=i+1}^{n} a_ij x_j) / a_ii$
    return $x$
