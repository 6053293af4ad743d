BINARY-SEARCH(A, n, x) {
    $low = 1$
    $high = n$
    while $low ≤ high$ {
        $mid = ⌊(low + high) / 2⌋$
        if $A[mid] == x$ {
            return $mid$
        } elseif $A[mid] < x$ {
            $low = mid + 1$
        } else {
            $high = mid - 1$
        }
    }
    return $NIL$
}
