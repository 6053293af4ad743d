EUCLID(a, b)
    if $b == 0$
        return $a$
    else
        return $EUCLID(b, a mod b)$
