RABIN-KARP-MATCHER(T, P, n, m, d, q) {
    $h = d^{m-1} mod q$
    $p = 0$
    $t_0 = 0$
    for $i = 1$ to $m$ {
        $p = (d p + P[i]) mod q$
        $t_0 = (d t_0 + T[i]) mod q$
    }
    for $s = 0$ to $n - m$ {
        if $p == t_s$ {
            if $P[1 : m] == T[s + 1 : s + m]$ {
                @print that the pattern occurs with shift s@
            }
        }
        if $s < n - m$ {
            $t_{s+1} = (d (t_s - T[s + 1] h) + T[s + m + 1]) mod q$
        }
    }
}
