ITERATIVE-FFT(a, n)
    BIT-REVERSE-COPY(a, A)
    for $s = 1$ to $lg n$
        $m = 2^s$
        $ω_m = e^{2πi/m}$
        for $k = 0$ to $n - 1 by m$
            $ω = 1$
            for $j = 0$ to $m/2 - 1$
                $t = ω · A[k + j + m/2]$
                $u = A[k + j]$
                $A[k + j] = u + t$
                $A[k + j + m/2] = u - t$
                $ω = ω · ω_m$
    return $A$
