// written by rmsnorm_bench.publish from rmsnorm_bench/views.js
var VIEWS = {
 "default": "nvidia-h100-80gb-hbm3+nvidia-h200",
 "machines": [
  "nvidia-h100-80gb-hbm3+nvidia-h200",
  "nvidia-h100-80gb-hbm3",
  "nvidia-h200",
  "cpu-smoke"
 ],
 "benchmarks": {
  "bench_rmsnorm.FusedAddRMSNormBackward.track_bandwidth": {
   "nvidia-h100-80gb-hbm3+nvidia-h200": "machine=nvidia-h100-80gb-hbm3&machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3%2Bnvidia-h200",
   "nvidia-h100-80gb-hbm3": "machine=nvidia-h100-80gb-hbm3&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3",
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-backend='triton'&view=cpu-smoke"
  },
  "bench_rmsnorm.FusedAddRMSNormBackward.track_device_time": {
   "nvidia-h100-80gb-hbm3+nvidia-h200": "machine=nvidia-h100-80gb-hbm3&machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3%2Bnvidia-h200",
   "nvidia-h100-80gb-hbm3": "machine=nvidia-h100-80gb-hbm3&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3",
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-backend='triton'&view=cpu-smoke"
  },
  "bench_rmsnorm.FusedAddRMSNormBackward.track_device_time_cold": {
   "nvidia-h100-80gb-hbm3+nvidia-h200": "machine=nvidia-h100-80gb-hbm3&machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3%2Bnvidia-h200",
   "nvidia-h100-80gb-hbm3": "machine=nvidia-h100-80gb-hbm3&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3",
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-backend='triton'&view=cpu-smoke"
  },
  "bench_rmsnorm.FusedAddRMSNormBackward.track_peak_memory": {
   "nvidia-h100-80gb-hbm3+nvidia-h200": "machine=nvidia-h100-80gb-hbm3&machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3%2Bnvidia-h200",
   "nvidia-h100-80gb-hbm3": "machine=nvidia-h100-80gb-hbm3&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3",
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-backend='triton'&view=cpu-smoke"
  },
  "bench_rmsnorm.FusedAddRMSNormBackward.track_public_ratio": {
   "nvidia-h100-80gb-hbm3+nvidia-h200": "machine=nvidia-h100-80gb-hbm3&machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='torch'&view=nvidia-h100-80gb-hbm3%2Bnvidia-h200",
   "nvidia-h100-80gb-hbm3": "machine=nvidia-h100-80gb-hbm3&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='torch'&view=nvidia-h100-80gb-hbm3",
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='torch'&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&view=cpu-smoke"
  },
  "bench_rmsnorm.FusedAddRMSNormBackward.track_time": {
   "nvidia-h100-80gb-hbm3+nvidia-h200": "machine=nvidia-h100-80gb-hbm3&machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3%2Bnvidia-h200",
   "nvidia-h100-80gb-hbm3": "machine=nvidia-h100-80gb-hbm3&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3",
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-case='1x256-bf16'&p-case='16x1000-f32'&p-case='3x20000-bf16'&p-backend='triton'&y-axis-scale=log&view=cpu-smoke"
  },
  "bench_rmsnorm.FusedAddRMSNormForward.track_bandwidth": {
   "nvidia-h100-80gb-hbm3+nvidia-h200": "machine=nvidia-h100-80gb-hbm3&machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3%2Bnvidia-h200",
   "nvidia-h100-80gb-hbm3": "machine=nvidia-h100-80gb-hbm3&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3",
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-backend='triton'&view=cpu-smoke"
  },
  "bench_rmsnorm.FusedAddRMSNormForward.track_device_time": {
   "nvidia-h100-80gb-hbm3+nvidia-h200": "machine=nvidia-h100-80gb-hbm3&machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3%2Bnvidia-h200",
   "nvidia-h100-80gb-hbm3": "machine=nvidia-h100-80gb-hbm3&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3",
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-backend='triton'&view=cpu-smoke"
  },
  "bench_rmsnorm.FusedAddRMSNormForward.track_device_time_cold": {
   "nvidia-h100-80gb-hbm3+nvidia-h200": "machine=nvidia-h100-80gb-hbm3&machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3%2Bnvidia-h200",
   "nvidia-h100-80gb-hbm3": "machine=nvidia-h100-80gb-hbm3&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3",
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-backend='triton'&view=cpu-smoke"
  },
  "bench_rmsnorm.FusedAddRMSNormForward.track_peak_memory": {
   "nvidia-h100-80gb-hbm3+nvidia-h200": "machine=nvidia-h100-80gb-hbm3&machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3%2Bnvidia-h200",
   "nvidia-h100-80gb-hbm3": "machine=nvidia-h100-80gb-hbm3&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3",
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-backend='triton'&view=cpu-smoke"
  },
  "bench_rmsnorm.FusedAddRMSNormForward.track_public_ratio": {
   "nvidia-h100-80gb-hbm3+nvidia-h200": "machine=nvidia-h100-80gb-hbm3&machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='torch'&view=nvidia-h100-80gb-hbm3%2Bnvidia-h200",
   "nvidia-h100-80gb-hbm3": "machine=nvidia-h100-80gb-hbm3&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='torch'&view=nvidia-h100-80gb-hbm3",
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='torch'&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&view=cpu-smoke"
  },
  "bench_rmsnorm.FusedAddRMSNormForward.track_time": {
   "nvidia-h100-80gb-hbm3+nvidia-h200": "machine=nvidia-h100-80gb-hbm3&machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3%2Bnvidia-h200",
   "nvidia-h100-80gb-hbm3": "machine=nvidia-h100-80gb-hbm3&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3",
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-case='1x256-bf16'&p-case='16x1000-f32'&p-case='3x20000-bf16'&p-backend='triton'&y-axis-scale=log&view=cpu-smoke"
  },
  "bench_rmsnorm.RMSNormBackward.track_bandwidth": {
   "nvidia-h100-80gb-hbm3+nvidia-h200": "machine=nvidia-h100-80gb-hbm3&machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3%2Bnvidia-h200",
   "nvidia-h100-80gb-hbm3": "machine=nvidia-h100-80gb-hbm3&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3",
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-backend='triton'&view=cpu-smoke"
  },
  "bench_rmsnorm.RMSNormBackward.track_device_time": {
   "nvidia-h100-80gb-hbm3+nvidia-h200": "machine=nvidia-h100-80gb-hbm3&machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3%2Bnvidia-h200",
   "nvidia-h100-80gb-hbm3": "machine=nvidia-h100-80gb-hbm3&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3",
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-backend='triton'&view=cpu-smoke"
  },
  "bench_rmsnorm.RMSNormBackward.track_device_time_cold": {
   "nvidia-h100-80gb-hbm3+nvidia-h200": "machine=nvidia-h100-80gb-hbm3&machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3%2Bnvidia-h200",
   "nvidia-h100-80gb-hbm3": "machine=nvidia-h100-80gb-hbm3&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3",
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-backend='triton'&view=cpu-smoke"
  },
  "bench_rmsnorm.RMSNormBackward.track_peak_memory": {
   "nvidia-h100-80gb-hbm3+nvidia-h200": "machine=nvidia-h100-80gb-hbm3&machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3%2Bnvidia-h200",
   "nvidia-h100-80gb-hbm3": "machine=nvidia-h100-80gb-hbm3&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3",
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-backend='triton'&view=cpu-smoke"
  },
  "bench_rmsnorm.RMSNormBackward.track_public_ratio": {
   "nvidia-h100-80gb-hbm3+nvidia-h200": "machine=nvidia-h100-80gb-hbm3&machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='torch'&view=nvidia-h100-80gb-hbm3%2Bnvidia-h200",
   "nvidia-h100-80gb-hbm3": "machine=nvidia-h100-80gb-hbm3&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='torch'&view=nvidia-h100-80gb-hbm3",
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='torch'&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&view=cpu-smoke"
  },
  "bench_rmsnorm.RMSNormBackward.track_time": {
   "nvidia-h100-80gb-hbm3+nvidia-h200": "machine=nvidia-h100-80gb-hbm3&machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&view=nvidia-h100-80gb-hbm3%2Bnvidia-h200",
   "nvidia-h100-80gb-hbm3": "machine=nvidia-h100-80gb-hbm3&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&view=nvidia-h100-80gb-hbm3",
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-case='1x256-bf16'&p-case='16x1000-f32'&p-case='3x20000-bf16'&p-backend='triton'&y-axis-scale=log&view=cpu-smoke"
  },
  "bench_rmsnorm.RMSNormForward.track_bandwidth": {
   "nvidia-h100-80gb-hbm3+nvidia-h200": "machine=nvidia-h100-80gb-hbm3&machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3%2Bnvidia-h200",
   "nvidia-h100-80gb-hbm3": "machine=nvidia-h100-80gb-hbm3&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3",
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-backend='triton'&view=cpu-smoke"
  },
  "bench_rmsnorm.RMSNormForward.track_device_time": {
   "nvidia-h100-80gb-hbm3+nvidia-h200": "machine=nvidia-h100-80gb-hbm3&machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3%2Bnvidia-h200",
   "nvidia-h100-80gb-hbm3": "machine=nvidia-h100-80gb-hbm3&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3",
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-backend='triton'&view=cpu-smoke"
  },
  "bench_rmsnorm.RMSNormForward.track_device_time_cold": {
   "nvidia-h100-80gb-hbm3+nvidia-h200": "machine=nvidia-h100-80gb-hbm3&machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3%2Bnvidia-h200",
   "nvidia-h100-80gb-hbm3": "machine=nvidia-h100-80gb-hbm3&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3",
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-backend='triton'&view=cpu-smoke"
  },
  "bench_rmsnorm.RMSNormForward.track_peak_memory": {
   "nvidia-h100-80gb-hbm3+nvidia-h200": "machine=nvidia-h100-80gb-hbm3&machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3%2Bnvidia-h200",
   "nvidia-h100-80gb-hbm3": "machine=nvidia-h100-80gb-hbm3&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3",
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-backend='triton'&view=cpu-smoke"
  },
  "bench_rmsnorm.RMSNormForward.track_public_ratio": {
   "nvidia-h100-80gb-hbm3+nvidia-h200": "machine=nvidia-h100-80gb-hbm3&machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='torch'&view=nvidia-h100-80gb-hbm3%2Bnvidia-h200",
   "nvidia-h100-80gb-hbm3": "machine=nvidia-h100-80gb-hbm3&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='torch'&view=nvidia-h100-80gb-hbm3",
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='torch'&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&view=cpu-smoke"
  },
  "bench_rmsnorm.RMSNormForward.track_time": {
   "nvidia-h100-80gb-hbm3+nvidia-h200": "machine=nvidia-h100-80gb-hbm3&machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3%2Bnvidia-h200",
   "nvidia-h100-80gb-hbm3": "machine=nvidia-h100-80gb-hbm3&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h100-80gb-hbm3",
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-case='1x256-bf16'&p-case='16x1000-f32'&p-case='3x20000-bf16'&p-backend='triton'&y-axis-scale=log&view=cpu-smoke"
  }
 },
 "ours": "triton",
 "higher_is_better": [
  "bench_rmsnorm.FusedAddRMSNormBackward.track_bandwidth",
  "bench_rmsnorm.FusedAddRMSNormBackward.track_public_ratio",
  "bench_rmsnorm.FusedAddRMSNormForward.track_bandwidth",
  "bench_rmsnorm.FusedAddRMSNormForward.track_public_ratio",
  "bench_rmsnorm.RMSNormBackward.track_bandwidth",
  "bench_rmsnorm.RMSNormBackward.track_public_ratio",
  "bench_rmsnorm.RMSNormForward.track_bandwidth",
  "bench_rmsnorm.RMSNormForward.track_public_ratio"
 ],
 "ratio": [
  "bench_rmsnorm.FusedAddRMSNormBackward.track_public_ratio",
  "bench_rmsnorm.FusedAddRMSNormForward.track_public_ratio",
  "bench_rmsnorm.RMSNormBackward.track_public_ratio",
  "bench_rmsnorm.RMSNormForward.track_public_ratio"
 ],
 "summaries": {
  "bench_rmsnorm.FusedAddRMSNormBackward.track_bandwidth": {
   "nvidia-h100-80gb-hbm3": [
    [
     351,
     1267.3524712982364
    ],
    [
     362,
     1322.1513714750683
    ],
    [
     446,
     1314.6118423540875
    ]
   ],
   "nvidia-h200": [
    [
     0,
     499.47446744526394
    ],
    [
     3,
     499.61481763960717
    ],
    [
     7,
     501.479599205178
    ],
    [
     10,
     501.9685206324098
    ],
    [
     15,
     499.96121766694074
    ],
    [
     20,
     639.9856117086274
    ],
    [
     21,
     648.4376439115147
    ],
    [
     22,
     647.2887750681708
    ],
    [
     30,
     646.0252467876018
    ],
    [
     35,
     650.8179844398525
    ],
    [
     44,
     655.5945348613096
    ],
    [
     51,
     655.4915964087523
    ],
    [
     55,
     661.3425458818191
    ],
    [
     87,
     727.9109918413611
    ],
    [
     94,
     731.7053127191484
    ],
    [
     104,
     489.22111081599184
    ],
    [
     190,
     618.3818343246061
    ],
    [
     224,
     617.7770835313639
    ],
    [
     244,
     613.6454491023845
    ],
    [
     252,
     619.4618546602011
    ],
    [
     255,
     618.9324218282177
    ],
    [
     274,
     618.8651815795201
    ],
    [
     307,
     617.9733343742682
    ],
    [
     362,
     618.8874057091277
    ]
   ]
  },
  "bench_rmsnorm.FusedAddRMSNormBackward.track_device_time": {
   "nvidia-h100-80gb-hbm3": [
    [
     351,
     4.153793091553655e-05
    ],
    [
     362,
     3.981632187080951e-05
    ],
    [
     446,
     4.00446718904515e-05
    ]
   ],
   "nvidia-h200": [
    [
     0,
     4.845054851149918e-05
    ],
    [
     3,
     4.843692318529927e-05
    ],
    [
     7,
     4.825681261708444e-05
    ],
    [
     10,
     4.82098084316748e-05
    ],
    [
     15,
     4.840336945729943e-05
    ],
    [
     20,
     3.7813044565794074e-05
    ],
    [
     21,
     3.732017205502866e-05
    ],
    [
     22,
     3.738641262112522e-05
    ],
    [
     30,
     3.7459534518393816e-05
    ],
    [
     35,
     3.7183683394082046e-05
    ],
    [
     44,
     3.691276282359535e-05
    ],
    [
     51,
     3.6918557794006474e-05
    ],
    [
     55,
     3.659195144706705e-05
    ],
    [
     87,
     3.324555977758592e-05
    ],
    [
     94,
     3.307315729447632e-05
    ],
    [
     104,
     4.9465985809935584e-05
    ],
    [
     190,
     3.913408317780747e-05
    ],
    [
     224,
     3.917239105315161e-05
    ],
    [
     244,
     3.94361448760182e-05
    ],
    [
     252,
     3.906585099408753e-05
    ],
    [
     255,
     3.909927068545823e-05
    ],
    [
     274,
     3.910351560720141e-05
    ],
    [
     307,
     3.915994963460504e-05
    ],
    [
     362,
     3.9102111649569635e-05
    ]
   ]
  },
  "bench_rmsnorm.FusedAddRMSNormBackward.track_device_time_cold": {
   "nvidia-h100-80gb-hbm3": [
    [
     351,
     5.473096064142623e-05
    ],
    [
     362,
     5.297848640585391e-05
    ],
    [
     446,
     5.366758321085179e-05
    ]
   ],
   "nvidia-h200": [
    [
     0,
     6.20894129632467e-05
    ],
    [
     3,
     6.157830237090773e-05
    ],
    [
     7,
     6.244412524031026e-05
    ],
    [
     10,
     6.201327966918692e-05
    ],
    [
     15,
     6.201489289514872e-05
    ],
    [
     20,
     5.289280279654709e-05
    ],
    [
     21,
     4.7429876763569464e-05
    ],
    [
     22,
     4.766040864157483e-05
    ],
    [
     30,
     4.7330334213780284e-05
    ],
    [
     35,
     4.758016705917975e-05
    ],
    [
     44,
     4.672231197663691e-05
    ],
    [
     51,
     4.670394012583796e-05
    ],
    [
     55,
     4.715891915288582e-05
    ],
    [
     87,
     4.466577956019128e-05
    ],
    [
     94,
     4.4706572845781426e-05
    ],
    [
     104,
     6.33265391100294e-05
    ],
    [
     190,
     5.234168779967435e-05
    ],
    [
     224,
     5.188077931474773e-05
    ],
    [
     244,
     5.2374512361757524e-05
    ],
    [
     252,
     5.283108032447375e-05
    ],
    [
     255,
     5.198143417024253e-05
    ],
    [
     274,
     5.171807143945036e-05
    ],
    [
     307,
     5.1564625382909266e-05
    ],
    [
     362,
     5.244736514124329e-05
    ]
   ]
  },
  "bench_rmsnorm.FusedAddRMSNormBackward.track_peak_memory": {
   "nvidia-h100-80gb-hbm3": [
    [
     351,
     29719586.837189224
    ],
    [
     362,
     27909579.35808557
    ],
    [
     446,
     27909579.35808557
    ]
   ],
   "nvidia-h200": [
    [
     0,
     8656631.243100097
    ],
    [
     3,
     8656631.243100097
    ],
    [
     7,
     8656631.243100097
    ],
    [
     10,
     8656631.243100097
    ],
    [
     15,
     8656631.243100097
    ],
    [
     20,
     6870772.7708989335
    ],
    [
     21,
     6765160.462119086
    ],
    [
     22,
     6765160.462119086
    ],
    [
     30,
     6765160.462119086
    ],
    [
     35,
     6765160.462119086
    ],
    [
     44,
     6765160.462119086
    ],
    [
     51,
     6765160.462119086
    ],
    [
     55,
     6765160.462119086
    ],
    [
     67,
     6765160.462119086
    ],
    [
     77,
     6765160.462119086
    ],
    [
     87,
     6765160.462119086
    ],
    [
     94,
     6765160.462119086
    ],
    [
     104,
     12098835.495611552
    ],
    [
     190,
     12196046.84948576
    ],
    [
     224,
     12196046.84948576
    ],
    [
     244,
     12196046.84948576
    ],
    [
     252,
     12196046.84948576
    ],
    [
     255,
     12196046.84948576
    ],
    [
     274,
     12196046.84948576
    ],
    [
     307,
     12196046.84948576
    ],
    [
     362,
     12196046.84948576
    ]
   ]
  },
  "bench_rmsnorm.FusedAddRMSNormBackward.track_public_ratio": {
   "nvidia-h100-80gb-hbm3": [
    [
     351,
     1.5780232211165375
    ],
    [
     362,
     1.5989309822759425
    ],
    [
     446,
     1.5840459776548377
    ]
   ],
   "nvidia-h200": [
    [
     224,
     1.5201114814363674
    ],
    [
     244,
     1.5215439431679314
    ],
    [
     252,
     1.5573680327566646
    ],
    [
     255,
     1.549444920032749
    ],
    [
     274,
     1.4959323690654847
    ],
    [
     307,
     1.4651276013111172
    ],
    [
     362,
     1.545695058213773
    ]
   ]
  },
  "bench_rmsnorm.FusedAddRMSNormBackward.track_time": {
   "nvidia-h100-80gb-hbm3": [
    [
     351,
     0.00015330118943783565
    ],
    [
     362,
     0.00014310776940458197
    ],
    [
     446,
     0.00013734672383885026
    ]
   ],
   "nvidia-h200": [
    [
     0,
     0.00034015020414699954
    ],
    [
     3,
     0.00035478999163797946
    ],
    [
     7,
     0.00018904559412123077
    ],
    [
     10,
     0.00017705344613264503
    ],
    [
     15,
     0.0003070318077232021
    ],
    [
     20,
     0.00020908946981165852
    ],
    [
     21,
     0.00019098051927677996
    ],
    [
     22,
     0.00026168531405492074
    ],
    [
     30,
     0.00029676601738183036
    ],
    [
     35,
     0.00029990891271366446
    ],
    [
     44,
     0.0002812832124665809
    ],
    [
     51,
     0.00024442108604836324
    ],
    [
     55,
     0.00017350146235984692
    ],
    [
     67,
     0.00020336052048485138
    ],
    [
     77,
     0.00017070234016195094
    ],
    [
     87,
     0.00015545254489661152
    ],
    [
     94,
     0.00023047972950171616
    ],
    [
     104,
     0.00017513414299359173
    ],
    [
     190,
     0.00015393387365299392
    ],
    [
     224,
     0.00013688755071540964
    ],
    [
     244,
     0.00015570423803756812
    ],
    [
     252,
     0.0001415210159499002
    ],
    [
     255,
     0.00014083066574433403
    ],
    [
     274,
     0.0001458318926638007
    ],
    [
     307,
     0.0001609098857031923
    ],
    [
     362,
     0.00014851428598045983
    ]
   ]
  },
  "bench_rmsnorm.FusedAddRMSNormForward.track_bandwidth": {
   "nvidia-h100-80gb-hbm3": [
    [
     351,
     1834.389486796917
    ],
    [
     362,
     1830.8128849233194
    ],
    [
     446,
     1833.5328952712441
    ]
   ],
   "nvidia-h200": [
    [
     0,
     715.204831405978
    ],
    [
     3,
     715.8132953761161
    ],
    [
     7,
     722.930336842275
    ],
    [
     10,
     722.831977858846
    ],
    [
     15,
     722.1935756414338
    ],
    [
     20,
     723.1620805545516
    ],
    [
     21,
     715.5644948775426
    ],
    [
     22,
     716.1757788833794
    ],
    [
     30,
     719.6489821192798
    ],
    [
     35,
     696.5743457228474
    ],
    [
     44,
     703.4221377280404
    ],
    [
     51,
     705.0481505886016
    ],
    [
     55,
     704.0889000078955
    ],
    [
     87,
     702.2567644043635
    ],
    [
     94,
     703.5810450820812
    ],
    [
     104,
     704.6278083727416
    ],
    [
     190,
     698.2544535213661
    ],
    [
     224,
     703.2874324058394
    ],
    [
     244,
     694.7050910932975
    ],
    [
     252,
     704.6762366804963
    ],
    [
     255,
     701.2657023432192
    ],
    [
     274,
     704.0120729658462
    ],
    [
     307,
     702.4289199400321
    ],
    [
     362,
     699.4373355811498
    ]
   ]
  },
  "bench_rmsnorm.FusedAddRMSNormForward.track_device_time": {
   "nvidia-h100-80gb-hbm3": [
    [
     351,
     2.8217511593720106e-05
    ],
    [
     362,
     2.8272641295014687e-05
    ],
    [
     446,
     2.8230693334622038e-05
    ]
   ],
   "nvidia-h200": [
    [
     0,
     3.1840789036258856e-05
    ],
    [
     3,
     3.181369279402745e-05
    ],
    [
     7,
     3.150049634878789e-05
    ],
    [
     10,
     3.1504781981925565e-05
    ],
    [
     15,
     3.1532631362851535e-05
    ],
    [
     20,
     3.1490403384247295e-05
    ],
    [
     21,
     3.182475766967969e-05
    ],
    [
     22,
     3.1797591130605695e-05
    ],
    [
     30,
     3.164412962187415e-05
    ],
    [
     35,
     3.269236771370017e-05
    ],
    [
     44,
     3.2374108223106954e-05
    ],
    [
     51,
     3.229945839198638e-05
    ],
    [
     55,
     3.2343450385533696e-05
    ],
    [
     87,
     3.24278352401932e-05
    ],
    [
     94,
     3.236680567247073e-05
    ],
    [
     104,
     3.2318713155462064e-05
    ],
    [
     190,
     3.2613705160072174e-05
    ],
    [
     224,
     3.238030897134441e-05
    ],
    [
     244,
     3.2780344908272646e-05
    ],
    [
     252,
     3.2316492561544666e-05
    ],
    [
     255,
     3.2473660903687984e-05
    ],
    [
     274,
     3.2346979320248056e-05
    ],
    [
     307,
     3.2419883938248006e-05
    ],
    [
     362,
     3.255854954458841e-05
    ]
   ]
  },
  "bench_rmsnorm.FusedAddRMSNormForward.track_device_time_cold": {
   "nvidia-h100-80gb-hbm3": [
    [
     351,
     4.203195958364231e-05
    ],
    [
     362,
     4.168372143370069e-05
    ],
    [
     446,
     4.190720776994989e-05
    ]
   ],
   "nvidia-h200": [
    [
     0,
     4.4410695284222425e-05
    ],
    [
     3,
     4.487439738441917e-05
    ],
    [
     7,
     4.7180658623672296e-05
    ],
    [
     10,
     4.723422167674166e-05
    ],
    [
     15,
     4.6108195930368893e-05
    ],
    [
     20,
     4.499412158916329e-05
    ],
    [
     21,
     4.5235609459281494e-05
    ],
    [
     22,
     4.613058540658271e-05
    ],
    [
     30,
     4.5524724363274833e-05
    ],
    [
     35,
     4.676648349532116e-05
    ],
    [
     44,
     4.556482001558834e-05
    ],
    [
     51,
     4.589898526396166e-05
    ],
    [
     55,
     4.694029514764813e-05
    ],
    [
     87,
     4.6652876068853265e-05
    ],
    [
     94,
     4.703380619239246e-05
    ],
    [
     104,
     4.605443518550767e-05
    ],
    [
     190,
     4.5981887139776685e-05
    ],
    [
     224,
     4.4849379393248226e-05
    ],
    [
     244,
     4.5718468318175044e-05
    ],
    [
     252,
     4.5898608846882084e-05
    ],
    [
     255,
     4.525709836119753e-05
    ],
    [
     274,
     4.6023783717730805e-05
    ],
    [
     307,
     4.558960076455954e-05
    ],
    [
     362,
     4.6274167867975066e-05
    ]
   ]
  },
  "bench_rmsnorm.FusedAddRMSNormForward.track_peak_memory": {
   "nvidia-h100-80gb-hbm3": [
    [
     351,
     25426618.010820985
    ],
    [
     362,
     25426618.010820985
    ],
    [
     446,
     25426618.010820985
    ]
   ],
   "nvidia-h200": [
    [
     0,
     10679253.483639307
    ],
    [
     3,
     10679253.483639307
    ],
    [
     7,
     10679253.483639307
    ],
    [
     10,
     10679253.483639307
    ],
    [
     15,
     10679253.483639307
    ],
    [
     20,
     10679253.483639307
    ],
    [
     21,
     10679253.483639307
    ],
    [
     22,
     10679253.483639307
    ],
    [
     30,
     10679253.483639307
    ],
    [
     35,
     10679253.483639307
    ],
    [
     44,
     10679253.483639307
    ],
    [
     51,
     10679253.483639307
    ],
    [
     55,
     10679253.483639307
    ],
    [
     67,
     10679253.483639307
    ],
    [
     77,
     10679253.483639307
    ],
    [
     87,
     10679253.483639307
    ],
    [
     94,
     10679253.483639307
    ],
    [
     104,
     10679253.483639307
    ],
    [
     190,
     10679253.483639307
    ],
    [
     224,
     10679253.483639307
    ],
    [
     244,
     10679253.483639307
    ],
    [
     252,
     10679253.483639307
    ],
    [
     255,
     10679253.483639307
    ],
    [
     274,
     10679253.483639307
    ],
    [
     307,
     10679253.483639307
    ],
    [
     362,
     10679253.483639307
    ]
   ]
  },
  "bench_rmsnorm.FusedAddRMSNormForward.track_public_ratio": {
   "nvidia-h100-80gb-hbm3": [
    [
     351,
     1.3541513921875545
    ],
    [
     362,
     1.3486255344676208
    ],
    [
     446,
     1.3529433715693064
    ]
   ],
   "nvidia-h200": [
    [
     224,
     1.3384042827369622
    ],
    [
     244,
     1.3243558969942768
    ],
    [
     252,
     1.3529075506177473
    ],
    [
     255,
     1.330578511269945
    ],
    [
     274,
     1.3264795703058674
    ],
    [
     307,
     1.3117921192863442
    ],
    [
     362,
     1.3382547973204064
    ]
   ]
  },
  "bench_rmsnorm.FusedAddRMSNormForward.track_time": {
   "nvidia-h100-80gb-hbm3": [
    [
     351,
     6.085510494465339e-05
    ],
    [
     362,
     6.033643242837622e-05
    ],
    [
     446,
     5.8462314339705866e-05
    ]
   ],
   "nvidia-h200": [
    [
     0,
     0.00013858856322667096
    ],
    [
     3,
     0.0001876837943782133
    ],
    [
     7,
     0.00011625277299731547
    ],
    [
     10,
     0.0001312314551548443
    ],
    [
     15,
     0.00011496441899518259
    ],
    [
     20,
     0.00013358807768240307
    ],
    [
     21,
     0.00015586494288397993
    ],
    [
     22,
     0.0001198449103539169
    ],
    [
     30,
     0.00012757318832398251
    ],
    [
     35,
     0.00015028736844790468
    ],
    [
     44,
     0.00015418180051646852
    ],
    [
     51,
     0.00012344763387940215
    ],
    [
     55,
     9.652030766259705e-05
    ],
    [
     67,
     0.00011386350180397013
    ],
    [
     77,
     9.01911665258444e-05
    ],
    [
     87,
     9.6170287329324e-05
    ],
    [
     94,
     9.298864562543988e-05
    ],
    [
     104,
     7.799756664071443e-05
    ],
    [
     190,
     7.786604879551974e-05
    ],
    [
     224,
     7.337170126767042e-05
    ],
    [
     244,
     8.005667006806492e-05
    ],
    [
     252,
     7.213655807182842e-05
    ],
    [
     255,
     7.669302266157895e-05
    ],
    [
     274,
     7.021083138042655e-05
    ],
    [
     307,
     8.080633420262376e-05
    ],
    [
     362,
     7.530118567809733e-05
    ]
   ]
  },
  "bench_rmsnorm.RMSNormBackward.track_bandwidth": {
   "nvidia-h100-80gb-hbm3": [
    [
     351,
     1386.81375643374
    ],
    [
     362,
     1425.4610158949506
    ],
    [
     446,
     1431.1924321673446
    ]
   ],
   "nvidia-h200": [
    [
     0,
     467.60774092478215
    ],
    [
     3,
     467.4911890200208
    ],
    [
     7,
     468.5673557332586
    ],
    [
     10,
     467.3544142328788
    ],
    [
     15,
     466.6634196102492
    ],
    [
     20,
     546.3187475020031
    ],
    [
     21,
     579.0036477410248
    ],
    [
     22,
     578.5169002125772
    ],
    [
     30,
     577.5605099224009
    ],
    [
     35,
     580.325897535115
    ],
    [
     44,
     588.5067840778474
    ],
    [
     51,
     589.4010044018148
    ],
    [
     55,
     589.0407911941815
    ],
    [
     87,
     651.804886637541
    ],
    [
     94,
     651.2682681940436
    ],
    [
     104,
     592.2247761062976
    ],
    [
     190,
     674.4167073483934
    ],
    [
     224,
     675.3184815339969
    ],
    [
     244,
     669.5972177541406
    ],
    [
     252,
     676.2501062290042
    ],
    [
     255,
     678.6241076946649
    ],
    [
     274,
     679.1114580621603
    ],
    [
     307,
     675.4903109696528
    ],
    [
     362,
     674.4832105191557
    ]
   ]
  },
  "bench_rmsnorm.RMSNormBackward.track_device_time": {
   "nvidia-h100-80gb-hbm3": [
    [
     351,
     2.8750765891937013e-05
    ],
    [
     362,
     2.7971259810067246e-05
    ],
    [
     446,
     2.7859245190461144e-05
    ]
   ],
   "nvidia-h200": [
    [
     0,
     4.0203098855492566e-05
    ],
    [
     3,
     4.021312322567864e-05
    ],
    [
     7,
     4.0120764387527127e-05
    ],
    [
     10,
     4.0224893397319014e-05
    ],
    [
     15,
     4.028445649601843e-05
    ],
    [
     20,
     3.441083139457507e-05
    ],
    [
     21,
     3.246833188828689e-05
    ],
    [
     22,
     3.2495646267537525e-05
    ],
    [
     30,
     3.254945630058794e-05
    ],
    [
     35,
     3.239435015779822e-05
    ],
    [
     44,
     3.194404057782964e-05
    ],
    [
     51,
     3.189556903710559e-05
    ],
    [
     55,
     3.191507448362276e-05
    ],
    [
     87,
     2.884189898491406e-05
    ],
    [
     94,
     2.8865671347409982e-05
    ],
    [
     104,
     3.174349356366165e-05
    ],
    [
     190,
     2.7874873811510296e-05
    ],
    [
     224,
     2.7837651261007503e-05
    ],
    [
     244,
     2.8075507248606787e-05
    ],
    [
     252,
     2.7799302443324212e-05
    ],
    [
     255,
     2.7702052957304988e-05
    ],
    [
     274,
     2.768217212434118e-05
    ],
    [
     307,
     2.783057221788605e-05
    ],
    [
     362,
     2.78721250763337e-05
    ]
   ]
  },
  "bench_rmsnorm.RMSNormBackward.track_device_time_cold": {
   "nvidia-h100-80gb-hbm3": [
    [
     351,
     3.952322257945364e-05
    ],
    [
     362,
     3.8656969805509333e-05
    ],
    [
     446,
     3.8504443421803374e-05
    ]
   ],
   "nvidia-h200": [
    [
     0,
     5.15071977455518e-05
    ],
    [
     3,
     5.1844734267700767e-05
    ],
    [
     7,
     5.1264869744077515e-05
    ],
    [
     10,
     5.1559663589534876e-05
    ],
    [
     15,
     5.15408097694129e-05
    ],
    [
     20,
     4.704518910890767e-05
    ],
    [
     21,
     4.114922282268061e-05
    ],
    [
     22,
     4.164052671049171e-05
    ],
    [
     30,
     4.170515018580498e-05
    ],
    [
     35,
     4.1781288725055215e-05
    ],
    [
     44,
     4.071320577764258e-05
    ],
    [
     51,
     4.069430514247112e-05
    ],
    [
     55,
     4.165194846719601e-05
    ],
    [
     87,
     3.8605503961129976e-05
    ],
    [
     94,
     3.897445987779705e-05
    ],
    [
     104,
     4.087179726245078e-05
    ],
    [
     190,
     3.838863317558961e-05
    ],
    [
     224,
     3.81293254088352e-05
    ],
    [
     244,
     3.8746887119779354e-05
    ],
    [
     252,
     3.8043697218642644e-05
    ],
    [
     255,
     3.82164379238623e-05
    ],
    [
     274,
     3.866100952688877e-05
    ],
    [
     307,
     3.8302687032996724e-05
    ],
    [
     362,
     3.857611876361452e-05
    ]
   ]
  },
  "bench_rmsnorm.RMSNormBackward.track_peak_memory": {
   "nvidia-h100-80gb-hbm3": [
    [
     351,
     17077721.63331387
    ],
    [
     362,
     15461792.391864952
    ],
    [
     446,
     15461792.391864952
    ]
   ],
   "nvidia-h200": [
    [
     0,
     8656631.243100097
    ],
    [
     3,
     8656631.243100097
    ],
    [
     7,
     8656631.243100097
    ],
    [
     10,
     8656631.243100097
    ],
    [
     15,
     8656631.243100097
    ],
    [
     20,
     6870772.7708989335
    ],
    [
     21,
     6765160.462119086
    ],
    [
     22,
     6765160.462119086
    ],
    [
     30,
     6765160.462119086
    ],
    [
     35,
     6765160.462119086
    ],
    [
     44,
     6765160.462119086
    ],
    [
     51,
     6765160.462119086
    ],
    [
     55,
     6765160.462119086
    ],
    [
     67,
     6765160.462119086
    ],
    [
     77,
     6765160.462119086
    ],
    [
     87,
     6765160.462119086
    ],
    [
     94,
     6765160.462119086
    ],
    [
     104,
     6836542.712789287
    ],
    [
     190,
     6765160.462119086
    ],
    [
     224,
     6765160.462119086
    ],
    [
     244,
     6765160.462119086
    ],
    [
     252,
     6765160.462119086
    ],
    [
     255,
     6765160.462119086
    ],
    [
     274,
     6765160.462119086
    ],
    [
     307,
     6765160.462119086
    ],
    [
     362,
     6765160.462119086
    ]
   ]
  },
  "bench_rmsnorm.RMSNormBackward.track_public_ratio": {
   "nvidia-h100-80gb-hbm3": [
    [
     351,
     1.339020088884451
    ],
    [
     362,
     1.3352586756633047
    ],
    [
     446,
     1.3386105713038694
    ]
   ],
   "nvidia-h200": [
    [
     224,
     1.2518944991155072
    ],
    [
     244,
     1.2236079995622202
    ],
    [
     252,
     1.2713037165484256
    ],
    [
     255,
     1.2626367642388272
    ],
    [
     274,
     1.2204356784675672
    ],
    [
     307,
     1.147579057567816
    ],
    [
     362,
     1.264688631580702
    ]
   ]
  },
  "bench_rmsnorm.RMSNormBackward.track_time": {
   "nvidia-h100-80gb-hbm3": [
    [
     351,
     0.00011076656396024434
    ],
    [
     362,
     0.00010870719531306386
    ],
    [
     446,
     0.00010038951353886359
    ]
   ],
   "nvidia-h200": [
    [
     0,
     0.0001863467191468322
    ],
    [
     3,
     0.0001863512246400352
    ],
    [
     7,
     0.00017541541502716506
    ],
    [
     10,
     0.00018121899916014478
    ],
    [
     15,
     0.0002590622790335149
    ],
    [
     20,
     0.0002904509650359284
    ],
    [
     21,
     0.00020343708635951144
    ],
    [
     22,
     0.00013395428410034306
    ],
    [
     30,
     0.00020826571168696198
    ],
    [
     35,
     0.00024798765187038853
    ],
    [
     44,
     0.00022123117513027057
    ],
    [
     51,
     0.00015305955683290006
    ],
    [
     55,
     0.00014811371268796367
    ],
    [
     67,
     0.00014044434593055407
    ],
    [
     77,
     0.00012152952474506201
    ],
    [
     87,
     0.00011621600732382444
    ],
    [
     94,
     0.00016452565957559816
    ],
    [
     104,
     0.00010058726864084108
    ],
    [
     190,
     0.00010472735120995823
    ],
    [
     224,
     0.00010634912072056048
    ],
    [
     244,
     9.742137367123108e-05
    ],
    [
     252,
     9.573495085545903e-05
    ],
    [
     255,
     9.494061681598732e-05
    ],
    [
     274,
     9.83795430192293e-05
    ],
    [
     307,
     0.00013178541912020454
    ],
    [
     362,
     9.901518460646435e-05
    ]
   ]
  },
  "bench_rmsnorm.RMSNormForward.track_bandwidth": {
   "nvidia-h100-80gb-hbm3": [
    [
     351,
     1577.5217452025947
    ],
    [
     362,
     1577.727678563765
    ],
    [
     446,
     1579.6077883460714
    ]
   ],
   "nvidia-h200": [
    [
     0,
     610.6138838994099
    ],
    [
     3,
     610.2888809368716
    ],
    [
     7,
     606.9385757225901
    ],
    [
     10,
     603.8437781669661
    ],
    [
     15,
     609.5279168695348
    ],
    [
     20,
     604.7840879145285
    ],
    [
     21,
     602.985033526736
    ],
    [
     22,
     609.908551475777
    ],
    [
     30,
     602.5901784829043
    ],
    [
     35,
     597.8472494090133
    ],
    [
     44,
     602.7581856873086
    ],
    [
     51,
     604.3427028800759
    ],
    [
     55,
     600.164777522641
    ],
    [
     87,
     602.9089079047643
    ],
    [
     94,
     603.0667887426573
    ],
    [
     104,
     604.1350315860118
    ],
    [
     190,
     598.1717199780848
    ],
    [
     224,
     603.7299199521067
    ],
    [
     244,
     592.2363362883602
    ],
    [
     252,
     600.8622672844742
    ],
    [
     255,
     600.8140457408367
    ],
    [
     274,
     599.71249126551
    ],
    [
     307,
     598.8660704784268
    ],
    [
     362,
     596.0308859873071
    ]
   ]
  },
  "bench_rmsnorm.RMSNormForward.track_device_time": {
   "nvidia-h100-80gb-hbm3": [
    [
     351,
     1.668714124694221e-05
    ],
    [
     362,
     1.6684963460841373e-05
    ],
    [
     446,
     1.666510403823789e-05
    ]
   ],
   "nvidia-h200": [
    [
     0,
     1.9817710232047992e-05
    ],
    [
     3,
     1.982826448837543e-05
    ],
    [
     7,
     1.9937716906555346e-05
    ],
    [
     10,
     2.0039913239101084e-05
    ],
    [
     15,
     1.9853020522460082e-05
    ],
    [
     20,
     2.000874413006725e-05
    ],
    [
     21,
     2.006844369958937e-05
    ],
    [
     22,
     1.9840628405456858e-05
    ],
    [
     30,
     2.008158979427995e-05
    ],
    [
     35,
     2.0240903978026372e-05
    ],
    [
     44,
     2.007599336605927e-05
    ],
    [
     51,
     2.0023357543751507e-05
    ],
    [
     55,
     2.0162753900014845e-05
    ],
    [
     87,
     2.0070974203971036e-05
    ],
    [
     94,
     2.006572146758884e-05
    ],
    [
     104,
     2.0030239185692556e-05
    ],
    [
     190,
     2.0229924815153e-05
    ],
    [
     224,
     2.004367916723221e-05
    ],
    [
     244,
     2.0432668663307128e-05
    ],
    [
     252,
     2.013933952163984e-05
    ],
    [
     255,
     2.0140955640700437e-05
    ],
    [
     274,
     2.0177950424128095e-05
    ],
    [
     307,
     2.0206469798334427e-05
    ],
    [
     362,
     2.0302586999670205e-05
    ]
   ]
  },
  "bench_rmsnorm.RMSNormForward.track_device_time_cold": {
   "nvidia-h100-80gb-hbm3": [
    [
     351,
     2.7157916723279973e-05
    ],
    [
     362,
     2.6803861647766647e-05
    ],
    [
     446,
     2.6867192559316252e-05
    ]
   ],
   "nvidia-h200": [
    [
     0,
     3.0424659786394402e-05
    ],
    [
     3,
     3.0543974080065355e-05
    ],
    [
     7,
     3.0015504604085855e-05
    ],
    [
     10,
     2.8727396971629737e-05
    ],
    [
     15,
     3.0420430257809466e-05
    ],
    [
     20,
     2.8986468165960487e-05
    ],
    [
     21,
     2.927410969556094e-05
    ],
    [
     22,
     3.175938329049049e-05
    ],
    [
     30,
     2.8952338670379298e-05
    ],
    [
     35,
     2.9537040600740914e-05
    ],
    [
     44,
     2.9289260686350894e-05
    ],
    [
     51,
     3.034448538557581e-05
    ],
    [
     55,
     3.005095798001722e-05
    ],
    [
     87,
     3.0388882397601017e-05
    ],
    [
     94,
     2.9263350364269167e-05
    ],
    [
     104,
     3.097065206220375e-05
    ],
    [
     190,
     2.9364295015930337e-05
    ],
    [
     224,
     3.0362828621400667e-05
    ],
    [
     244,
     2.985887827815928e-05
    ],
    [
     252,
     3.020735743972169e-05
    ],
    [
     255,
     2.9282732932828976e-05
    ],
    [
     274,
     2.9466521729222547e-05
    ],
    [
     307,
     2.9730252879083106e-05
    ],
    [
     362,
     2.9550615474558898e-05
    ]
   ]
  },
  "bench_rmsnorm.RMSNormForward.track_peak_memory": {
   "nvidia-h100-80gb-hbm3": [
    [
     351,
     12750314.463466488
    ],
    [
     362,
     12750314.463466488
    ],
    [
     446,
     12750314.463466488
    ]
   ],
   "nvidia-h200": [
    [
     0,
     5393684.719475948
    ],
    [
     3,
     5393684.719475948
    ],
    [
     7,
     5393684.719475948
    ],
    [
     10,
     5393684.719475948
    ],
    [
     15,
     5393684.719475948
    ],
    [
     20,
     5393684.719475948
    ],
    [
     21,
     5393684.719475948
    ],
    [
     22,
     5393684.719475948
    ],
    [
     30,
     5393684.719475948
    ],
    [
     35,
     5393684.719475948
    ],
    [
     44,
     5393684.719475948
    ],
    [
     51,
     5393684.719475948
    ],
    [
     55,
     5393684.719475948
    ],
    [
     67,
     5393684.719475948
    ],
    [
     77,
     5393684.719475948
    ],
    [
     87,
     5393684.719475948
    ],
    [
     94,
     5393684.719475948
    ],
    [
     104,
     5393684.719475948
    ],
    [
     190,
     5393684.719475948
    ],
    [
     224,
     5393684.719475948
    ],
    [
     244,
     5393684.719475948
    ],
    [
     252,
     5393684.719475948
    ],
    [
     255,
     5393684.719475948
    ],
    [
     274,
     5393684.719475948
    ],
    [
     307,
     5393684.719475948
    ],
    [
     362,
     5393684.719475948
    ]
   ]
  },
  "bench_rmsnorm.RMSNormForward.track_public_ratio": {
   "nvidia-h100-80gb-hbm3": [
    [
     351,
     1.1435940101068405
    ],
    [
     362,
     1.1320693900575096
    ],
    [
     446,
     1.1450304280131998
    ]
   ],
   "nvidia-h200": [
    [
     224,
     1.139398276228145
    ],
    [
     244,
     1.1126163363882122
    ],
    [
     252,
     1.1376937535780909
    ],
    [
     255,
     1.1321396681140417
    ],
    [
     274,
     1.134738503612254
    ],
    [
     307,
     1.0973539546781177
    ],
    [
     362,
     1.1193067876999592
    ]
   ]
  },
  "bench_rmsnorm.RMSNormForward.track_time": {
   "nvidia-h100-80gb-hbm3": [
    [
     351,
     3.5385481546253116e-05
    ],
    [
     362,
     3.549812631129045e-05
    ],
    [
     446,
     3.335653173485422e-05
    ]
   ],
   "nvidia-h200": [
    [
     0,
     8.24199794732498e-05
    ],
    [
     3,
     7.55495804297478e-05
    ],
    [
     7,
     0.00011926313317998718
    ],
    [
     10,
     0.00014787015895755646
    ],
    [
     15,
     8.460257786317754e-05
    ],
    [
     20,
     0.00012226463002528348
    ],
    [
     21,
     0.00011284321490865395
    ],
    [
     22,
     8.347326451334075e-05
    ],
    [
     30,
     8.110710730064758e-05
    ],
    [
     35,
     0.00011160449313752892
    ],
    [
     44,
     0.00010411239768336047
    ],
    [
     51,
     6.229164628849721e-05
    ],
    [
     55,
     7.101202136577413e-05
    ],
    [
     67,
     6.872687604367173e-05
    ],
    [
     77,
     5.391240677751547e-05
    ],
    [
     87,
     5.588954354186145e-05
    ],
    [
     94,
     5.767120944809164e-05
    ],
    [
     104,
     4.202921082323854e-05
    ],
    [
     190,
     4.8173958509176246e-05
    ],
    [
     224,
     4.0320172544425105e-05
    ],
    [
     244,
     4.5303731649846844e-05
    ],
    [
     252,
     4.060983546801619e-05
    ],
    [
     255,
     4.569726271076375e-05
    ],
    [
     274,
     4.60517385350515e-05
    ],
    [
     307,
     4.94260360261818e-05
    ],
    [
     362,
     4.7211153228224806e-05
    ]
   ]
  }
 },
 "known": [
  {
   "name": "bench_rmsnorm.FusedAddRMSNormBackward.track_peak_memory('1x4096-bf16', 'triton')",
   "machine": "nvidia-h200",
   "commits": "759181ab..a9137396",
   "before": "0.02 MiB",
   "after": "0.02 MiB",
   "reason": "the fused-add backward's gradient fix (efdd400): x and residual, two leaves, each get a gradient buffer of their own (one more M x N write and buffer); 759181a's figures were of two views of one buffer, a wrong result (docs/known-steps.json; docs/perf-notes.md)",
   "link": "bench_rmsnorm.FusedAddRMSNormBackward.track_peak_memory?machine=nvidia-h200&view=nvidia-h200&commits=759181abc0097e67fb622971b3d088067a4591b8-a9137396030a909c8786fe63806c492ba0cfb58d&p-case='1x4096-bf16'&p-backend='triton'"
  },
  {
   "name": "bench_rmsnorm.FusedAddRMSNormBackward.track_peak_memory('4096x4096-bf16', 'triton')",
   "machine": "nvidia-h200",
   "commits": "759181ab..6690e887",
   "before": "34.07 MiB",
   "after": "66.07 MiB",
   "reason": "the fused-add backward's gradient fix (efdd400): x and residual, two leaves, each get a gradient buffer of their own (one more M x N write and buffer); 759181a's figures were of two views of one buffer, a wrong result (docs/known-steps.json; docs/perf-notes.md)",
   "link": "bench_rmsnorm.FusedAddRMSNormBackward.track_peak_memory?machine=nvidia-h200&view=nvidia-h200&commits=759181abc0097e67fb622971b3d088067a4591b8-6690e887f4cd5574a8bf3893c8e4e4792b363a5d&p-case='4096x4096-bf16'&p-backend='triton'"
  },
  {
   "name": "bench_rmsnorm.FusedAddRMSNormBackward.track_peak_memory('512x2048-bf16', 'triton')",
   "machine": "nvidia-h200",
   "commits": "759181ab..6690e887",
   "before": "3.04 MiB",
   "after": "5.04 MiB",
   "reason": "the fused-add backward's gradient fix (efdd400): x and residual, two leaves, each get a gradient buffer of their own (one more M x N write and buffer); 759181a's figures were of two views of one buffer, a wrong result (docs/known-steps.json; docs/perf-notes.md)",
   "link": "bench_rmsnorm.FusedAddRMSNormBackward.track_peak_memory?machine=nvidia-h200&view=nvidia-h200&commits=759181abc0097e67fb622971b3d088067a4591b8-6690e887f4cd5574a8bf3893c8e4e4792b363a5d&p-case='512x2048-bf16'&p-backend='triton'"
  },
  {
   "name": "bench_rmsnorm.FusedAddRMSNormBackward.track_peak_memory('512x3000-f32', 'triton')",
   "machine": "nvidia-h200",
   "commits": "759181ab..6690e887",
   "before": "8.29 MiB",
   "after": "14.15 MiB",
   "reason": "the fused-add backward's gradient fix (efdd400): x and residual, two leaves, each get a gradient buffer of their own (one more M x N write and buffer); 759181a's figures were of two views of one buffer, a wrong result (docs/known-steps.json; docs/perf-notes.md)",
   "link": "bench_rmsnorm.FusedAddRMSNormBackward.track_peak_memory?machine=nvidia-h200&view=nvidia-h200&commits=759181abc0097e67fb622971b3d088067a4591b8-6690e887f4cd5574a8bf3893c8e4e4792b363a5d&p-case='512x3000-f32'&p-backend='triton'"
  },
  {
   "name": "bench_rmsnorm.FusedAddRMSNormBackward.track_peak_memory('1024x8192-bf16', 'triton')",
   "machine": "nvidia-h200",
   "commits": "759181ab..6690e887",
   "before": "20.14 MiB",
   "after": "36.14 MiB",
   "reason": "the fused-add backward's gradient fix (efdd400): x and residual, two leaves, each get a gradient buffer of their own (one more M x N write and buffer); 759181a's figures were of two views of one buffer, a wrong result (docs/known-steps.json; docs/perf-notes.md)",
   "link": "bench_rmsnorm.FusedAddRMSNormBackward.track_peak_memory?machine=nvidia-h200&view=nvidia-h200&commits=759181abc0097e67fb622971b3d088067a4591b8-6690e887f4cd5574a8bf3893c8e4e4792b363a5d&p-case='1024x8192-bf16'&p-backend='triton'"
  },
  {
   "name": "bench_rmsnorm.FusedAddRMSNormBackward.track_peak_memory('16384x4096-bf16', 'triton')",
   "machine": "nvidia-h200",
   "commits": "759181ab..a9137396",
   "before": "130.07 MiB",
   "after": "256.01 MiB",
   "reason": "the fused-add backward's gradient fix (efdd400): x and residual, two leaves, each get a gradient buffer of their own (one more M x N write and buffer); 759181a's figures were of two views of one buffer, a wrong result (docs/known-steps.json; docs/perf-notes.md)",
   "link": "bench_rmsnorm.FusedAddRMSNormBackward.track_peak_memory?machine=nvidia-h200&view=nvidia-h200&commits=759181abc0097e67fb622971b3d088067a4591b8-a9137396030a909c8786fe63806c492ba0cfb58d&p-case='16384x4096-bf16'&p-backend='triton'"
  },
  {
   "name": "bench_rmsnorm.FusedAddRMSNormBackward.track_peak_memory('8192x8192-bf16', 'triton')",
   "machine": "nvidia-h200",
   "commits": "759181ab..a9137396",
   "before": "132.14 MiB",
   "after": "256.02 MiB",
   "reason": "the fused-add backward's gradient fix (efdd400): x and residual, two leaves, each get a gradient buffer of their own (one more M x N write and buffer); 759181a's figures were of two views of one buffer, a wrong result (docs/known-steps.json; docs/perf-notes.md)",
   "link": "bench_rmsnorm.FusedAddRMSNormBackward.track_peak_memory?machine=nvidia-h200&view=nvidia-h200&commits=759181abc0097e67fb622971b3d088067a4591b8-a9137396030a909c8786fe63806c492ba0cfb58d&p-case='8192x8192-bf16'&p-backend='triton'"
  },
  {
   "name": "bench_rmsnorm.FusedAddRMSNormBackward.track_peak_memory('32768x8192-bf16', 'triton')",
   "machine": "nvidia-h200",
   "commits": "759181ab..6690e887",
   "before": "516.14 MiB",
   "after": "1028.14 MiB",
   "reason": "the fused-add backward's gradient fix (efdd400): x and residual, two leaves, each get a gradient buffer of their own (one more M x N write and buffer); 759181a's figures were of two views of one buffer, a wrong result (docs/known-steps.json; docs/perf-notes.md)",
   "link": "bench_rmsnorm.FusedAddRMSNormBackward.track_peak_memory?machine=nvidia-h200&view=nvidia-h200&commits=759181abc0097e67fb622971b3d088067a4591b8-6690e887f4cd5574a8bf3893c8e4e4792b363a5d&p-case='32768x8192-bf16'&p-backend='triton'"
  },
  {
   "name": "bench_rmsnorm.FusedAddRMSNormBackward.track_peak_memory('4096x4096-f16', 'triton')",
   "machine": "nvidia-h200",
   "commits": "759181ab..6690e887",
   "before": "34.07 MiB",
   "after": "66.07 MiB",
   "reason": "the fused-add backward's gradient fix (efdd400): x and residual, two leaves, each get a gradient buffer of their own (one more M x N write and buffer); 759181a's figures were of two views of one buffer, a wrong result (docs/known-steps.json; docs/perf-notes.md)",
   "link": "bench_rmsnorm.FusedAddRMSNormBackward.track_peak_memory?machine=nvidia-h200&view=nvidia-h200&commits=759181abc0097e67fb622971b3d088067a4591b8-6690e887f4cd5574a8bf3893c8e4e4792b363a5d&p-case='4096x4096-f16'&p-backend='triton'"
  },
  {
   "name": "bench_rmsnorm.FusedAddRMSNormBackward.track_peak_memory('4096x4096-f32', 'triton')",
   "machine": "nvidia-h200",
   "commits": "759181ab..6690e887",
   "before": "66.08 MiB",
   "after": "130.08 MiB",
   "reason": "the fused-add backward's gradient fix (efdd400): x and residual, two leaves, each get a gradient buffer of their own (one more M x N write and buffer); 759181a's figures were of two views of one buffer, a wrong result (docs/known-steps.json; docs/perf-notes.md)",
   "link": "bench_rmsnorm.FusedAddRMSNormBackward.track_peak_memory?machine=nvidia-h200&view=nvidia-h200&commits=759181abc0097e67fb622971b3d088067a4591b8-6690e887f4cd5574a8bf3893c8e4e4792b363a5d&p-case='4096x4096-f32'&p-backend='triton'"
  },
  {
   "name": "bench_rmsnorm.FusedAddRMSNormBackward.track_device_time('4096x4096-bf16', 'triton')",
   "machine": "nvidia-h200",
   "commits": "759181ab..6690e887",
   "before": "37.6 us",
   "after": "46.8 us",
   "reason": "the fused-add backward's gradient fix (efdd400): x and residual, two leaves, each get a gradient buffer of their own (one more M x N write and buffer); 759181a's figures were of two views of one buffer, a wrong result (docs/known-steps.json; docs/perf-notes.md)",
   "link": "bench_rmsnorm.FusedAddRMSNormBackward.track_device_time?machine=nvidia-h200&view=nvidia-h200&commits=759181abc0097e67fb622971b3d088067a4591b8-6690e887f4cd5574a8bf3893c8e4e4792b363a5d&p-case='4096x4096-bf16'&p-backend='triton'"
  },
  {
   "name": "bench_rmsnorm.FusedAddRMSNormBackward.track_device_time('512x3000-f32', 'triton')",
   "machine": "nvidia-h200",
   "commits": "759181ab..6690e887",
   "before": "7.4 us",
   "after": "8.5 us",
   "reason": "the fused-add backward's gradient fix (efdd400): x and residual, two leaves, each get a gradient buffer of their own (one more M x N write and buffer); 759181a's figures were of two views of one buffer, a wrong result (docs/known-steps.json; docs/perf-notes.md)",
   "link": "bench_rmsnorm.FusedAddRMSNormBackward.track_device_time?machine=nvidia-h200&view=nvidia-h200&commits=759181abc0097e67fb622971b3d088067a4591b8-6690e887f4cd5574a8bf3893c8e4e4792b363a5d&p-case='512x3000-f32'&p-backend='triton'"
  },
  {
   "name": "bench_rmsnorm.FusedAddRMSNormBackward.track_device_time('1024x8192-bf16', 'triton')",
   "machine": "nvidia-h200",
   "commits": "759181ab..6690e887",
   "before": "22.2 us",
   "after": "27.4 us",
   "reason": "the fused-add backward's gradient fix (efdd400): x and residual, two leaves, each get a gradient buffer of their own (one more M x N write and buffer); 759181a's figures were of two views of one buffer, a wrong result (docs/known-steps.json; docs/perf-notes.md)",
   "link": "bench_rmsnorm.FusedAddRMSNormBackward.track_device_time?machine=nvidia-h200&view=nvidia-h200&commits=759181abc0097e67fb622971b3d088067a4591b8-6690e887f4cd5574a8bf3893c8e4e4792b363a5d&p-case='1024x8192-bf16'&p-backend='triton'"
  },
  {
   "name": "bench_rmsnorm.FusedAddRMSNormBackward.track_device_time('16384x4096-bf16', 'triton')",
   "machine": "nvidia-h200",
   "commits": "759181ab..a9137396",
   "before": "131.1 us",
   "after": "166.4 us",
   "reason": "the fused-add backward's gradient fix (efdd400): x and residual, two leaves, each get a gradient buffer of their own (one more M x N write and buffer); 759181a's figures were of two views of one buffer, a wrong result (docs/known-steps.json; docs/perf-notes.md)",
   "link": "bench_rmsnorm.FusedAddRMSNormBackward.track_device_time?machine=nvidia-h200&view=nvidia-h200&commits=759181abc0097e67fb622971b3d088067a4591b8-a9137396030a909c8786fe63806c492ba0cfb58d&p-case='16384x4096-bf16'&p-backend='triton'"
  },
  {
   "name": "bench_rmsnorm.FusedAddRMSNormBackward.track_device_time('8192x8192-bf16', 'triton')",
   "machine": "nvidia-h200",
   "commits": "759181ab..a9137396",
   "before": "131.4 us",
   "after": "167.2 us",
   "reason": "the fused-add backward's gradient fix (efdd400): x and residual, two leaves, each get a gradient buffer of their own (one more M x N write and buffer); 759181a's figures were of two views of one buffer, a wrong result (docs/known-steps.json; docs/perf-notes.md)",
   "link": "bench_rmsnorm.FusedAddRMSNormBackward.track_device_time?machine=nvidia-h200&view=nvidia-h200&commits=759181abc0097e67fb622971b3d088067a4591b8-a9137396030a909c8786fe63806c492ba0cfb58d&p-case='8192x8192-bf16'&p-backend='triton'"
  },
  {
   "name": "bench_rmsnorm.FusedAddRMSNormBackward.track_device_time('32768x8192-bf16', 'triton')",
   "machine": "nvidia-h200",
   "commits": "759181ab..6690e887",
   "before": "497.1 us",
   "after": "644.5 us",
   "reason": "the fused-add backward's gradient fix (efdd400): x and residual, two leaves, each get a gradient buffer of their own (one more M x N write and buffer); 759181a's figures were of two views of one buffer, a wrong result (docs/known-steps.json; docs/perf-notes.md)",
   "link": "bench_rmsnorm.FusedAddRMSNormBackward.track_device_time?machine=nvidia-h200&view=nvidia-h200&commits=759181abc0097e67fb622971b3d088067a4591b8-6690e887f4cd5574a8bf3893c8e4e4792b363a5d&p-case='32768x8192-bf16'&p-backend='triton'"
  },
  {
   "name": "bench_rmsnorm.FusedAddRMSNormBackward.track_device_time('4096x4096-f16', 'triton')",
   "machine": "nvidia-h200",
   "commits": "759181ab..6690e887",
   "before": "37.1 us",
   "after": "46.1 us",
   "reason": "the fused-add backward's gradient fix (efdd400): x and residual, two leaves, each get a gradient buffer of their own (one more M x N write and buffer); 759181a's figures were of two views of one buffer, a wrong result (docs/known-steps.json; docs/perf-notes.md)",
   "link": "bench_rmsnorm.FusedAddRMSNormBackward.track_device_time?machine=nvidia-h200&view=nvidia-h200&commits=759181abc0097e67fb622971b3d088067a4591b8-6690e887f4cd5574a8bf3893c8e4e4792b363a5d&p-case='4096x4096-f16'&p-backend='triton'"
  },
  {
   "name": "bench_rmsnorm.FusedAddRMSNormBackward.track_device_time('4096x4096-f32', 'triton')",
   "machine": "nvidia-h200",
   "commits": "759181ab..6690e887",
   "before": "67.6 us",
   "after": "92.0 us",
   "reason": "the fused-add backward's gradient fix (efdd400): x and residual, two leaves, each get a gradient buffer of their own (one more M x N write and buffer); 759181a's figures were of two views of one buffer, a wrong result (docs/known-steps.json; docs/perf-notes.md)",
   "link": "bench_rmsnorm.FusedAddRMSNormBackward.track_device_time?machine=nvidia-h200&view=nvidia-h200&commits=759181abc0097e67fb622971b3d088067a4591b8-6690e887f4cd5574a8bf3893c8e4e4792b363a5d&p-case='4096x4096-f32'&p-backend='triton'"
  }
 ],
 "no_commit_url": "#no-commit-url/"
};
// What rmsnorm_bench/pages.py adds to asv's pages (views.js, after `var VIEWS = {...};`):
// default views per machine, readable graphs, front-page graphs per GPU machine, the
// benchmark list's colours for figures that are better when higher, known steps on the
// Regressions page, and no link where no commit URL is known. asv's own scripts are left
// as they are: this one wraps $.plot (flot), which every asv graph is drawn by.
(function () {
  "use strict";

  /* ---- the hash: a benchmark page that names no machine opens on the default view ---- */
  function split() {
    var h = window.location.hash.replace(/^#\/?/, "");
    var q = h.indexOf("?");
    return {name: decodeURIComponent(q < 0 ? h : h.slice(0, q)),
            query: q < 0 ? "" : h.slice(q + 1)};
  }
  function keys(query) {
    return query.split("&").map(function (p) { return decodeURIComponent(p.split("=")[0]); });
  }
  function apply() {
    var at = split(), views = VIEWS.benchmarks[at.name];
    if (!views || !VIEWS["default"]) return;
    var k = keys(at.query);
    if (k.indexOf("machine") >= 0 || k.indexOf("view") >= 0) return;
    var hash = "#" + encodeURIComponent(at.name) + "?" +
      (at.query ? at.query + "&" : "") + views[VIEWS["default"]];
    history.replaceState(null, "", hash);
  }
  function links() {
    var li = document.getElementById("nav-li-views");
    if (!li) return;
    var at = split(), views = VIEWS.benchmarks[at.name];
    li.style.display = views ? "" : "none";
    if (!views) return;
    var p = li.querySelector("p");
    p.textContent = "view: ";
    VIEWS.machines.forEach(function (m, i) {
      var a = document.createElement("a");
      a.className = "navbar-link";
      a.href = "#" + encodeURIComponent(at.name) + "?" + views[m];
      a.textContent = m;
      if (i) p.appendChild(document.createTextNode(" | "));
      p.appendChild(a);
    });
  }

  /* ---- the benchmark shown, its unit and direction ---- */
  function current() { return split().name; }
  function unitOf(name) {
    var b = window.$ && $.asv && $.asv.main_json && $.asv.main_json.benchmarks[name];
    return b ? b.unit : "";
  }
  function higherIsBetter(name) { return VIEWS.higher_is_better.indexOf(name) >= 0; }

  /* ---- commit links where no URL is known: plain text, never a link to nowhere ---- */
  function unlink(root) {
    if (!VIEWS.no_commit_url || !root.querySelectorAll) return;
    var found = root.querySelectorAll('a[href^="' + VIEWS.no_commit_url + '"]');
    Array.prototype.forEach.call(found, function (a) {
      a.removeAttribute("href");
      a.title = "commit " + a.textContent + " (no repository URL was set when publishing)";
    });
  }
  if (VIEWS.no_commit_url) {
    var open = window.open;
    window.open = function (url) {
      if (typeof url === "string" && url.indexOf(VIEWS.no_commit_url) === 0) return null;
      return open.apply(window, arguments);
    };
  }

  /* ---- axis ticks a reader can read values from ---- */
  function niceTicks(lo, hi) {
    // 1-2-5 steps of each decade between lo and hi (1-3 where they span many decades)
    var steps = Math.log(hi / lo) / Math.LN10 > 3 ? [1, 3] : [1, 2, 5];
    var ticks = [];
    for (var e = Math.floor(Math.log(lo) / Math.LN10); e <= Math.ceil(Math.log(hi) / Math.LN10); ++e) {
      steps.forEach(function (s) {
        var v = s * Math.pow(10, e);
        if (v >= lo && v <= hi) ticks.push(v);
      });
    }
    if (ticks.length < 2) ticks = [lo, Math.sqrt(lo * hi), hi];
    return ticks;
  }
  function short(v, unit) {
    if (!(v > 0 || v < 0)) return "0";
    // seconds and bytes scaled (us, MiB...); other units are on the axis's label
    var text = unit === "seconds" || unit === "bytes" ? $.asv.pretty_unit(v, unit) : "" + v.toPrecision(3);
    return text.replace(/(\.\d*?)0+(?=\D|$)/, "$1").replace(/\.(?=\D|$)/, "");
  }
  function extent(series) {
    var lo = Infinity, hi = -Infinity;
    series.forEach(function (s) {
      (s.data || []).forEach(function (p) {
        var y = p[1];
        if (y !== null && y === y && isFinite(y)) { lo = Math.min(lo, y); hi = Math.max(hi, y); }
      });
    });
    return [lo, hi];
  }
  function hasData(s) {
    return (s.data || []).some(function (p) { return p[1] !== null && p[1] === p[1]; });
  }

  /* ---- the main graph: ours apart from the peers, a legend beside the plot ---- */
  // twelve colours told apart (asv's list repeats within a graph of 8 cases)
  var PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
                 "#17becf", "#7f7f7f", "#bcbd22", "#393b79", "#ad494a"];
  var OURS = new RegExp("(^|; )backend-" + VIEWS.ours + "(;|$)");
  function legendBox() {
    var box = document.getElementById("rb-legend");
    if (box) return box;
    var graph = document.getElementById("main-graph");
    if (!graph) return null;
    box = document.createElement("div");
    box.id = "rb-legend";
    box.style.cssText = "position:absolute;top:48px;right:0;width:270px;bottom:100px;" +
      "overflow-y:auto;font-size:12px";
    graph.parentNode.style.right = "280px";
    graph.parentNode.parentNode.appendChild(box);
    return box;
  }
  function mainGraph(series, options) {
    var name = current(), unit = unitOf(name);
    // a backend with no figure is no entry of the legend; asv draws the same objects again
    // on every change of the view, so they are copied, not changed
    series = series.filter(hasData).map(function (s) {
      var label = (s.label || "").replace(/(^|; )commit-last(?=;|$)/, "");
      if (/(^|; )machine-/.test(label)) label = label.replace(/(^|; )gpu-[^;]*(?=;|$)/, "");
      label = label.replace(/^; /, "");
      var ours = OURS.test(label);
      return $.extend({}, s, {
        label: ours ? label + " (ours)" : label,
        lines: {show: true, lineWidth: ours ? 2.5 : 1},
        points: {show: true, radius: ours ? 3 : 1.5}
      });
    });
    options.colors = PALETTE;
    // ours drawn last, over the peers
    series.sort(function (a, b) { return /\(ours\)$/.test(a.label) - /\(ours\)$/.test(b.label); });
    var box = legendBox();
    if (box) {
      box.innerHTML = "";
      if (options.legend && options.legend.show !== false) {
        options.legend.container = $(box);
        options.legend.noColumns = 1;
      }
    }
    var range = extent(series), y = options.yaxis || (options.yaxis = {});
    if (isFinite(range[0]) && typeof y.transform === "function" && range[0] > 0) {
      // asv's log axis has a tick per decade; ticks a value can be read from, and the
      // range of the data rather than whole decades
      var lo = range[0] / 1.15, hi = range[1] * 1.15;
      y.min = lo; y.max = hi;
      y.ticks = niceTicks(lo, hi);
      y.tickFormatter = function (v) { return short(v, unit); };
    } else if (isFinite(range[0]) && !y.transform) {
      y.tickFormatter = function (v) { return short(v, unit); };
    }
    if (VIEWS.ratio.indexOf(name) >= 0 && isFinite(range[0])) {
      // peer over ours: 1.0 is the line between ahead and behind
      var grid = options.grid || (options.grid = {});
      grid.markings = (grid.markings || []).concat([
        {yaxis: {from: 1, to: 1}, color: "#000", lineWidth: 2}]);
      if (!y.transform) {
        var low = Math.min(range[0], 1), high = Math.max(range[1], 1), pad = (high - low) * 0.08 || 0.1;
        y.min = low - pad; y.max = high + pad;
      }
    }
    return series;
  }

  /* ---- the front page: each GPU machine's graph, with axes, inside the frame ---- */
  function thumbnail(name, series, options) {
    var per = VIEWS.summaries[name] || {};
    var machines = Object.keys(per).filter(function (m) { return per[m].length; });
    if (machines.length) {
      series = machines.map(function (m) { return {data: per[m], label: m}; });
    }
    var unit = unitOf(name);
    options.grid = $.extend(options.grid || {}, {borderWidth: 1, margin: {top: 4, right: 6, bottom: 2, left: 2}, labelMargin: 3, minBorderMargin: 4});
    options.yaxis = {ticks: 3, tickFormatter: function (v) { return short(v, unit); },
                     font: {size: 9, color: "#555"}};
    var r = extent(series);
    if (isFinite(r[0])) {
      var pad = (r[1] - r[0]) * 0.1 || r[0] * 0.05 || 1;
      options.yaxis.min = Math.max(0, r[0] - pad); options.yaxis.max = r[1] + pad;
    }
    if (VIEWS.ratio.indexOf(name) >= 0 && isFinite(r[0])) {  // 1.0: ours and the peer alike
      options.yaxis.min = Math.min(options.yaxis.min, 0.9);
      options.yaxis.max = Math.max(options.yaxis.max, 1.1);
      options.grid.markings = [{yaxis: {from: 1, to: 1}, color: "#333", lineWidth: 1}];
    }
    options.xaxis = {ticks: []};
    options.legend = {show: machines.length > 0, noColumns: machines.length || 1};
    return series;
  }
  function thumbnailLegend(div) {
    var box = div.parentNode && div.parentNode.querySelector(".rb-thumb-legend");
    if (!box && div.parentNode) {
      box = document.createElement("div");
      box.className = "rb-thumb-legend";
      div.parentNode.appendChild(box);
    }
    return box;
  }

  function wrapPlot() {
    if (!window.$ || !$.plot || $.plot.rbWrapped) return;
    var plot = $.plot;
    var wrapped = function (placeholder, series, options) {
      var el = $(placeholder)[0], id = (el && el.id) || "";
      options = $.extend(true, {}, options || {});
      if (id === "main-graph") {
        series = mainGraph(series, options);
      } else if (id.indexOf("summarygrid-") === 0) {
        var name = id.slice("summarygrid-".length);
        series = thumbnail(name, series, options);
        var box = thumbnailLegend(el);
        if (box) { box.innerHTML = ""; options.legend.container = $(box); }
      }
      return plot(placeholder, series, options);
    };
    $.extend(wrapped, plot);
    wrapped.rbWrapped = true;
    $.plot = wrapped;
  }

  /* ---- the benchmark list: a rise of a figure better when higher is no regression ---- */
  function recolour(root) {
    if (!root.querySelectorAll) return;
    var cells = root.querySelectorAll("td.change.positive-change, td.change.negative-change");
    Array.prototype.forEach.call(cells, function (td) {
      if (td.getAttribute("data-rb-direction")) return;
      var a = td.parentNode && td.parentNode.querySelector("td a");
      var name = a ? decodeURIComponent((a.getAttribute("href") || "").replace(/^#/, "").split("?")[0]) : "";
      td.setAttribute("data-rb-direction", higherIsBetter(name) ? "higher" : "lower");
      if (!higherIsBetter(name)) return;
      var up = td.classList.contains("positive-change");
      td.classList.toggle("positive-change", !up);
      td.classList.toggle("negative-change", up);
      td.title = "higher is better for this figure";
    });
  }

  /* ---- the Regressions page: steps explained in docs/known-steps.json ---- */
  function known() {
    var body = document.getElementById("regressions-body");
    if (!body || !VIEWS.known.length || document.getElementById("rb-known")) return;
    if (!body.querySelector("table")) return;  // asv has not drawn its list yet
    var section = document.createElement("div");
    section.id = "rb-known";
    var h = document.createElement("h2");
    h.textContent = "Known, explained steps (" + VIEWS.known.length + ", docs/known-steps.json): not regressions";
    section.appendChild(h);
    var table = document.createElement("table");
    table.className = "table table-hover";
    table.innerHTML = "<thead><tr><th>benchmark</th><th>machine</th><th>commits</th>" +
      "<th>before</th><th>after</th><th>reason</th></tr></thead>";
    var tbody = document.createElement("tbody");
    VIEWS.known.forEach(function (k) {
      var tr = document.createElement("tr");
      var cells = [k.name, k.machine, k.commits, k.before, k.after, k.reason];
      cells.forEach(function (text, i) {
        var td = document.createElement("td");
        if (i === 0) {
          var a = document.createElement("a");
          a.href = "#" + k.link;
          a.textContent = text;
          td.appendChild(a);
        } else {
          td.textContent = text;
        }
        tr.appendChild(td);
      });
      tbody.appendChild(tr);
    });
    table.appendChild(tbody);
    section.appendChild(table);
    body.appendChild(section);
  }

  function watch() {
    unlink(document);
    recolour(document);
    known();
    new MutationObserver(function (changes) {
      changes.forEach(function (c) {
        Array.prototype.forEach.call(c.addedNodes, function (n) { unlink(n); recolour(n); });
      });
      known();
    }).observe(document.body, {childList: true, subtree: true});
  }

  wrapPlot();
  apply();
  window.addEventListener("hashchange", function () { apply(); links(); });
  document.addEventListener("DOMContentLoaded", function () { wrapPlot(); links(); watch(); });
})();
