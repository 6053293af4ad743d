RADIX-SORT(A, n, d)
    for $i = 1$ to $d$
        @use a stable sort to sort the array A[1 : n] on digit i@
