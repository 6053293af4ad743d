FINITE-AUTOMATON-MATCHER(T, δ, n, m)
    $q = 0$
    for $i = 1$ to $n$
        $q = δ(q, T[i])$
        if $q == m$
            @report that the pattern occurs with shift i - m@
