FLOYD-WARSHALL(W, n)
    $D = W$
    for $k = 1$ to $n$
        @let D' be a new n × n matrix@
        for $i = 1$ to $n$
            for $j = 1$ to $n$
                $D'[i][j] = min(D[i][j], D[i][k] + D[k][j])$
        $D = D'$
    return $D$
