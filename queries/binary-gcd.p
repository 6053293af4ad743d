BINARY-GCD(a, b)
    if $a == 0$
        return $b$
    if $b == 0$
        return $a$
    $k = 0$
    while $a mod 2 == 0$ and $b mod 2 == 0$
        $a = a / 2$
        $b = b / 2$
        $k = k + 1$
    while $a mod 2 == 0$
        $a = a / 2$
    repeat
        while $b mod 2 == 0$
            $b = b / 2$
        if $a > b$
            @exchange a with b@
        $b = b - a$
    until $b == 0$
    return $2^k · a$
