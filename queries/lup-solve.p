LUP-SOLVE(L, U, π, b, n)
    @let x and y be new vectors of length n@
    for $i = 1$ to $n$
        $y_i = b_{π[i]} - Σ_{j=1}^{i-1} l_ij y_j$
    for $i = n$ downto $1$
        $x_i = (y_i - Σ_{j=i+1}^{n} u_ij x_j) / u_ii$
    return $x$
