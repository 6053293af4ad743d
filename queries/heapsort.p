HEAPSORT(A, n)
    BUILD-MAX-HEAP(A, n)
    for $i = n$ downto $2$
        @exchange A[1] with A[i]@
        $A.heap-size = A.heap-size - 1$
        MAX-HEAPIFY(A, 1)

BUILD-MAX-HEAP(A, n)
    $A.heap-size = n$
    for $i = ⌊n / 2⌋$ downto $1$
        MAX-HEAPIFY(A, i)

MAX-HEAPIFY(A, i)
    $l = 2i$
    $r = 2i + 1$
    if $l ≤ A.heap-size$ and $A[l] > A[i]$
        $largest = l$
    else
        $largest = i$
    if $r ≤ A.heap-size$ and $A[r] > A[largest]$
        $largest = r$
    if $largest ≠ i$
        @exchange A[i] with A[largest]@
        MAX-HEAPIFY(A, largest)
