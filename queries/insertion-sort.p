INSERTION-SORT(A, n)
    for $i = 2$ to $n$
        $key = A[i]$   // A[1 : i - 1] is already sorted
        $j = i - 1$
        while $j > 0$ and $A[j] > key$
            $A[j + 1] = A[j]$
            $j = j - 1$
        $A[j + 1] = key$
