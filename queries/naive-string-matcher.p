NAIVE-STRING-MATCHER(T, P, n, m)
    for $s = 0$ to $n - m$
        if $P[1 : m] == T[s + 1 : s + m]$
            @print that the pattern occurs with shift s@
