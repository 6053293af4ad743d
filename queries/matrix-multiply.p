MATRIX-MULTIPLY(A, B, C, n)
    for $i = 1$ to $n$
        for $j = 1$ to $n$
            for $k = 1$ to $n$
                $c_ij = c_ij + a_ik · b_kj$
