MODULAR-LINEAR-EQUATION-SOLVER(a, b, n)
    $(d, x', y') = EXTENDED-EUCLID(a, n)$
    if $d | b$
        $x_0 = x' (b / d) mod n$
        for $i = 0$ to $d - 1$
            @print the solution (x_0 + i (n / d)) mod n@
    else
        @print that the equation has no solutions@
