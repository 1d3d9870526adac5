// written by rmsnorm_bench.publish (rmsnorm_bench/pages.py): default views per machine
(function () {
  var VIEWS = {
 "default": "nvidia-h200",
 "machines": [
  "nvidia-h200",
  "cpu-smoke"
 ],
 "benchmarks": {
  "bench_rmsnorm.FusedAddRMSNormBackward.track_bandwidth": {
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-backend='triton'&view=cpu-smoke"
  },
  "bench_rmsnorm.FusedAddRMSNormBackward.track_device_time": {
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-backend='triton'&view=cpu-smoke"
  },
  "bench_rmsnorm.FusedAddRMSNormBackward.track_device_time_cold": {
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-backend='triton'&view=cpu-smoke"
  },
  "bench_rmsnorm.FusedAddRMSNormBackward.track_peak_memory": {
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-backend='triton'&view=cpu-smoke"
  },
  "bench_rmsnorm.FusedAddRMSNormBackward.track_public_ratio": {
   "nvidia-h200": "machine=nvidia-h200&p-backend='triton'&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-backend='triton'&view=cpu-smoke"
  },
  "bench_rmsnorm.FusedAddRMSNormBackward.track_time": {
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-case='1x256-bf16'&p-case='16x1000-f32'&p-case='3x20000-bf16'&p-backend='triton'&y-axis-scale=log&view=cpu-smoke"
  },
  "bench_rmsnorm.FusedAddRMSNormForward.track_bandwidth": {
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-backend='triton'&view=cpu-smoke"
  },
  "bench_rmsnorm.FusedAddRMSNormForward.track_device_time": {
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-backend='triton'&view=cpu-smoke"
  },
  "bench_rmsnorm.FusedAddRMSNormForward.track_device_time_cold": {
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-backend='triton'&view=cpu-smoke"
  },
  "bench_rmsnorm.FusedAddRMSNormForward.track_peak_memory": {
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-backend='triton'&view=cpu-smoke"
  },
  "bench_rmsnorm.FusedAddRMSNormForward.track_public_ratio": {
   "nvidia-h200": "machine=nvidia-h200&p-backend='triton'&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-backend='triton'&view=cpu-smoke"
  },
  "bench_rmsnorm.FusedAddRMSNormForward.track_time": {
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-case='1x256-bf16'&p-case='16x1000-f32'&p-case='3x20000-bf16'&p-backend='triton'&y-axis-scale=log&view=cpu-smoke"
  },
  "bench_rmsnorm.RMSNormBackward.track_bandwidth": {
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-backend='triton'&view=cpu-smoke"
  },
  "bench_rmsnorm.RMSNormBackward.track_device_time": {
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-backend='triton'&view=cpu-smoke"
  },
  "bench_rmsnorm.RMSNormBackward.track_device_time_cold": {
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-backend='triton'&view=cpu-smoke"
  },
  "bench_rmsnorm.RMSNormBackward.track_peak_memory": {
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-backend='triton'&view=cpu-smoke"
  },
  "bench_rmsnorm.RMSNormBackward.track_public_ratio": {
   "nvidia-h200": "machine=nvidia-h200&p-backend='triton'&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-backend='triton'&view=cpu-smoke"
  },
  "bench_rmsnorm.RMSNormBackward.track_time": {
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-case='1x256-bf16'&p-case='16x1000-f32'&p-case='3x20000-bf16'&p-backend='triton'&y-axis-scale=log&view=cpu-smoke"
  },
  "bench_rmsnorm.RMSNormForward.track_bandwidth": {
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-backend='triton'&view=cpu-smoke"
  },
  "bench_rmsnorm.RMSNormForward.track_device_time": {
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-backend='triton'&view=cpu-smoke"
  },
  "bench_rmsnorm.RMSNormForward.track_device_time_cold": {
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-backend='triton'&view=cpu-smoke"
  },
  "bench_rmsnorm.RMSNormForward.track_peak_memory": {
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-backend='triton'&view=cpu-smoke"
  },
  "bench_rmsnorm.RMSNormForward.track_public_ratio": {
   "nvidia-h200": "machine=nvidia-h200&p-backend='triton'&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-backend='triton'&view=cpu-smoke"
  },
  "bench_rmsnorm.RMSNormForward.track_time": {
   "nvidia-h200": "machine=nvidia-h200&p-case='1x4096-bf16'&p-case='128x4096-bf16'&p-case='4096x4096-bf16'&p-case='512x2048-bf16'&p-case='512x3000-f32'&p-case='1024x8192-bf16'&p-case='16384x4096-bf16'&p-case='8192x8192-bf16'&p-backend='triton'&y-axis-scale=log&view=nvidia-h200",
   "cpu-smoke": "machine=cpu-smoke&p-case='1x256-bf16'&p-case='16x1000-f32'&p-case='3x20000-bf16'&p-backend='triton'&y-axis-scale=log&view=cpu-smoke"
  }
 }
};
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
  apply();
  window.addEventListener("hashchange", function () { apply(); links(); });
  document.addEventListener("DOMContentLoaded", links);
})();
