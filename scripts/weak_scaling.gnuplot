# Plots docs/weak_scaling.csv (scripts/weak_scaling.sh): four panels against
# the partition size n (devices = n), one line per mode and data placement.
set datafile separator ","
set terminal pngcairo size 1200,900 font ",10"
set output "docs/weak_scaling.png"
set multiplot layout 2,2 title "FedAvg transformer LM, weak scaling (n groups on n devices)"
set logscale x 2
set xtics (1, 2, 4, 8)
set xrange [0.8:10]
set xlabel "partition size n = devices"
set key top left
set grid
modes = "annotated ns loop"
placements = "split replicated"
col(name) = name eq "ms" ? 5 : name eq "flops" ? 6 : name eq "peak" ? 7 : 9
do for [panel in "ms flops peak sent"] {
  if (panel eq "ms") { set title "wall time per round (ms, 2 cores)"; set ylabel "ms" }
  if (panel eq "flops") { set title "FLOPs per device per round"; set ylabel "MFLOP" }
  if (panel eq "peak") { set title "peak memory per device (cost report)"; set ylabel "KiB" }
  if (panel eq "sent") { set title "bytes sent per device per round"; set ylabel "KiB" }
  scale = panel eq "ms" ? 1.0 : panel eq "flops" ? 1e-6 : 1.0/1024
  c = col(panel)
  plot for [p in placements] for [m in modes] "docs/weak_scaling.csv" \
       using (strcol(1) eq m && strcol(2) eq p ? $3 : NaN):(column(c)*scale) \
       with linespoints title sprintf("%s (%s data)", m, p)
}
unset multiplot
