PRINT-ALL-PAIRS-SHORTEST-PATH(Π, i, j)
    if $i == j$
        @print i@
    elseif $π_ij == NIL$
        @print that there is no path from i to j@
    else
        PRINT-ALL-PAIRS-SHORTEST-PATH(Π, i, π_ij)
        @print j@
