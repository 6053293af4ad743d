LU-DECOMPOSITION(A, n) {
    @let L and U be new n × n matrices@
    @initialize U with 0s below the diagonal@
    @initialize L with 1s on the diagonal and 0s above the diagonal@
    for $k = 1$ to $n$ {
        $u_kk = a_kk$
        for $i = k + 1$ to $n$ {
            $l_ik = a_ik / a_kk$
            $u_ki = a_ki$
        }
        for $i = k + 1$ to $n$ {
            for $j = k + 1$ to $n$ {
                $a_ij = a_ij - l_ik · u_kj$
            }
        }
    }
    return $L, U$
}
