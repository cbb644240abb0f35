# The machine kind that names a folder of benchmarks/results: the CPU's vendor and its best
# bf16 matrix unit (intel-amx, amd-avx512bf16, amd-avx2, ...). Sourced by the scripts here.
machine() {  # vendor and bf16 unit, from /proc/cpuinfo
  local vendor flags unit
  vendor=$(awk -F': ' '/^vendor_id/ {print $2; exit}' /proc/cpuinfo)
  flags=" $(awk -F': ' '/^flags/ {print $2; exit}' /proc/cpuinfo) "
  case $vendor in GenuineIntel) vendor=intel ;; AuthenticAMD) vendor=amd ;; *) vendor=${vendor,,} ;; esac
  if [[ $flags == *" amx_bf16 "* ]]; then unit=amx
  elif [[ $flags == *" avx512_bf16 "* ]]; then unit=avx512bf16
  elif [[ $flags == *" avx512f "* ]]; then unit=avx512
  else unit=avx2; fi
  echo "${vendor:-cpu}-$unit"
}
