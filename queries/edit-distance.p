EDIT-DISTANCE(x, y, m, n)
    @let d[0 : m, 0 : n] be a new table@
    for $i = 0$ to $m$
        $d[i, 0] = i$
    for $j = 0$ to $n$
        $d[0, j] = j$
    for $i = 1$ to $m$
        for $j = 1$ to $n$
            if $x[i] == y[j]$
                $cost = 0$
            else
                $cost = 1$
            $d[i, j] = min(d[i - 1, j] + 1, d[i, j - 1] + 1, d[i - 1, j - 1] + cost)$
    return $d[m, n]$
