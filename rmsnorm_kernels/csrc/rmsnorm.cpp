// The compiled host path: RMSNorm and fused residual-add RMSNorm as PyTorch operators whose
// per-call work is all C++, from dispatch to launch, with a C++ autograd node.
//
// Read top-down: the CUDA driver (loaded at run time), the callbacks into Python (taken once
// per cache key, never per call), the plans and compiled variants, argument packing and the
// launch, the forward and backward operators, autograd, and the registrations.
//
// Python (rmsnorm_kernels/_plan.py) owns the configuration: for each cache key it hands over
// a plan (launch ids and the numbers of the grid rules) and, for each variant, Triton's
// compiled binary with its launch constants. This file applies the plan's rules per call,
// allocates outputs through PyTorch's caching allocator and launches on the current stream.
// CPU tensors (Triton's interpreter) take the same path up to the launch, which Python makes.

// What this file uses, not <torch/extension.h> (all of libtorch's C++ API): the build is the
// slowest step of a fresh set-up (about 30 s against 20 s of compiling on a 2-core machine).
#include <ATen/autocast_mode.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/rms_norm.h>
#include <ATen/ops/zeros_like.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/csrc/utils/pybind.h>
#include <torch/library.h>

#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <mutex>
#include <numeric>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace py = pybind11;
using at::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

namespace {

// Error messages are built here, with std::to_string and snprintf, and handed to TORCH_CHECK
// as one string: on an H200 machine's toolchain, c10::str's stream formatting of an integer
// inside this extension crashed the process (a segfault in the error path).
void append(std::string& s, const char* v) { s += v; }
void append(std::string& s, const std::string& v) { s += v; }
void append(std::string& s, int64_t v) { s += std::to_string(v); }
void append(std::string& s, int v) { s += std::to_string(v); }
void append(std::string& s, double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g", v);
  s += buffer;
}
void append(std::string& s, const c10::Device& v) { s += v.str(); }

template <typename... Parts>
std::string cat(const Parts&... parts) {
  std::string s;
  (append(s, parts), ...);
  return s;
}

// ------------------------------------------------------------------------------------------
// The CUDA driver API, looked up in libcuda at run time: the extension links no CUDA
// library, so it builds where there is no GPU (its CPU path then serves Triton's interpreter).
// ------------------------------------------------------------------------------------------

using CUresult = int;
using CUmodule = void*;
using CUfunction = void*;
using CUstream = void*;
constexpr int kMaxDynamicSharedAttribute = 8;  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
constexpr int kStaticSharedLimit = 48 * 1024;

struct Driver {
  CUresult (*module_load_data)(CUmodule*, const void*) = nullptr;
  CUresult (*module_get_function)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*func_set_attribute)(CUfunction, int, int) = nullptr;
  CUresult (*launch_kernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                            unsigned, unsigned, CUstream, void**, void**) = nullptr;
  CUresult (*get_error_string)(CUresult, const char**) = nullptr;
  CUresult (*ctx_get_current)(void**) = nullptr;
  CUresult (*ctx_set_current)(void*) = nullptr;
  CUresult (*device_get)(int*, int) = nullptr;
  CUresult (*primary_ctx_retain)(void**, int) = nullptr;

  // Whether libcuda and every entry point above were found.
  bool load() {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!lib) return false;
    module_load_data = reinterpret_cast<decltype(module_load_data)>(dlsym(lib, "cuModuleLoadData"));
    module_get_function =
        reinterpret_cast<decltype(module_get_function)>(dlsym(lib, "cuModuleGetFunction"));
    func_set_attribute =
        reinterpret_cast<decltype(func_set_attribute)>(dlsym(lib, "cuFuncSetAttribute"));
    launch_kernel = reinterpret_cast<decltype(launch_kernel)>(dlsym(lib, "cuLaunchKernel"));
    get_error_string = reinterpret_cast<decltype(get_error_string)>(dlsym(lib, "cuGetErrorString"));
    ctx_get_current = reinterpret_cast<decltype(ctx_get_current)>(dlsym(lib, "cuCtxGetCurrent"));
    ctx_set_current = reinterpret_cast<decltype(ctx_set_current)>(dlsym(lib, "cuCtxSetCurrent"));
    device_get = reinterpret_cast<decltype(device_get)>(dlsym(lib, "cuDeviceGet"));
    primary_ctx_retain =
        reinterpret_cast<decltype(primary_ctx_retain)>(dlsym(lib, "cuDevicePrimaryCtxRetain"));
    return module_load_data && module_get_function && func_set_attribute && launch_kernel &&
           get_error_string && ctx_get_current && ctx_set_current && device_get &&
           primary_ctx_retain;
  }

  // Make the device's primary context current on this thread where none is. The runtime
  // API (torch's own kernels, its allocator) does so on a thread's first call; the driver API
  // does not. A thread that reaches us first has none: the autograd engine's device thread
  // when our backward is the first node it runs and every buffer comes from the allocator's
  // cache (seen on an H200: "cuModuleLoadData failed: invalid device context", error 201,
  // at a process's first backward).
  void use_primary_context(int ordinal) const {
    void* current = nullptr;
    check(ctx_get_current(&current), "cuCtxGetCurrent");
    if (current) return;
    int device = 0;
    void* primary = nullptr;
    check(device_get(&device, ordinal), "cuDeviceGet");
    check(primary_ctx_retain(&primary, device), "cuDevicePrimaryCtxRetain");
    check(ctx_set_current(primary), "cuCtxSetCurrent");
  }

  void check(CUresult result, const char* what) const {
    if (result == 0) return;
    const char* message = "unknown error";
    get_error_string(result, &message);
    TORCH_CHECK(false,
                cat("rmsnorm_kernels: ", what, " failed: ", message, " (CUDA error ", result, ")"));
  }
};

Driver& driver() {
  static Driver* d = [] {
    auto* d = new Driver();
    if (!d->load()) d->launch_kernel = nullptr;
    return d;
  }();
  return *d;
}

// ------------------------------------------------------------------------------------------
// Callbacks into Python, set once by rmsnorm_kernels._extension. Each takes the GIL; none is
// made while this file holds its own lock, so the two can never wait on each other.
// ------------------------------------------------------------------------------------------

struct Callbacks {
  py::object forward_plan;   // (x, weight or None, has_residual) -> tuple of ints
  py::object backward_plan;  // (x, weight or None, compute_dw, has_dres) -> tuple of ints
  py::object compile;        // (launch id, grid, args, align, flags) -> variant tuple or None
  py::object launch;         // (launch id, grid, args, align, flags) -> None
};
Callbacks* callbacks = nullptr;  // leaked: Python objects must not be freed at process exit

struct Constants {
  int64_t max_single_block_n = 0, stream_min_n = 0;
  int64_t dot_block_n = 0, dot_segments = 0;
  bool interpreting = false;  // Triton's interpreter: CPU tensors are accepted
} constants;

// ------------------------------------------------------------------------------------------
// Kernel arguments, as Python passes them to kernel[grid](...): tensors, None (an absent
// operand), integers and floats.
// ------------------------------------------------------------------------------------------

struct Arg {
  enum Kind : char { kTensor, kNone, kInt, kFloat } kind;
  const Tensor* tensor = nullptr;
  int64_t i = 0;
  double f = 0;
};
Arg tensor_arg(const Tensor& t) { return {Arg::kTensor, &t}; }
Arg optional_arg(const Tensor* t) { return t && t->defined() ? tensor_arg(*t) : Arg{Arg::kNone}; }
Arg int_arg(int64_t v) { return {Arg::kInt, nullptr, v}; }
Arg float_arg(double v) { return {Arg::kFloat, nullptr, 0, v}; }

constexpr int kMaxArgs = 20;
using Args = std::array<Arg, kMaxArgs>;

py::tuple python_args(const Arg* args, int n) {
  py::tuple out(n);
  for (int i = 0; i < n; ++i) {
    const Arg& a = args[i];
    switch (a.kind) {
      case Arg::kTensor: out[i] = py::cast(*a.tensor); break;
      case Arg::kNone: out[i] = py::none(); break;
      case Arg::kInt: out[i] = py::int_(a.i); break;
      case Arg::kFloat: out[i] = py::float_(a.f); break;
    }
  }
  return out;
}

// ------------------------------------------------------------------------------------------
// Compiled variants. Triton specialises a kernel on its constexprs, the width of each integer
// and whether each pointer is 16-byte aligned; the key holds all of these.
// ------------------------------------------------------------------------------------------

struct Variant {
  CUfunction function = nullptr;  // null: launched by Python (no binary this file can load)
  unsigned threads = 0, shared = 0;
  std::string kinds;  // per argument passed: p pointer, i int32, l int64, f float32
  int extra_params = 0;  // trailing pointer parameters Triton adds (scratch), passed as null
};

// What decides a variant besides its launch: ALIGN, the flags, the device, each tensor's
// dtype, each integer's width and whether each pointer is 16-byte aligned.
struct VariantKey {
  uint64_t launch_and_layout;  // launch, ALIGN, flags, device, wide integers, unaligned pointers
  uint64_t dtypes;             // 6 bits per tensor argument, in order
  bool operator==(const VariantKey& o) const {
    return launch_and_layout == o.launch_and_layout && dtypes == o.dtypes;
  }
};
struct VariantKeyHash {
  size_t operator()(const VariantKey& k) const {
    return std::hash<uint64_t>()(k.launch_and_layout * 0x9E3779B97F4A7C15ull ^ k.dtypes);
  }
};

VariantKey variant_key(int launch, int align, int flags, int device, const Arg* args, int n) {
  uint64_t wide = 0, unaligned = 0, dtypes = 0;
  int tensors = 0;
  for (int i = 0; i < n; ++i) {
    const Arg& a = args[i];
    if (a.kind == Arg::kInt && (a.i < INT32_MIN || a.i > INT32_MAX)) wide |= 1ull << i;
    if (a.kind == Arg::kTensor) {
      if (reinterpret_cast<uintptr_t>(a.tensor->data_ptr()) % 16) unaligned |= 1ull << i;
      dtypes |= (static_cast<uint64_t>(a.tensor->scalar_type()) + 1) << (6 * tensors++);
    }
  }
  TORCH_INTERNAL_ASSERT(launch < (1 << 14) && n <= 17 && flags < 16 && device < 256 &&
                        tensors <= 10);
  int align_log2 = __builtin_ctz(static_cast<unsigned>(align));
  uint64_t layout = static_cast<uint64_t>(launch) | static_cast<uint64_t>(align_log2) << 14 |
                    static_cast<uint64_t>(flags) << 17 | static_cast<uint64_t>(device) << 21 |
                    wide << 29 | unaligned << 46;
  return {layout, dtypes};
}

std::mutex cache_mutex;  // guards the two maps below; never held while Python runs
std::unordered_map<VariantKey, Variant, VariantKeyHash> variants;
std::unordered_map<uint64_t, std::vector<int64_t>> plans;

// The variant for this launch, compiled by Python and loaded here on a miss.
const Variant& find_variant(int launch, std::array<int64_t, 2> grid, const Arg* args, int n,
                            int align, int flags, int device) {
  VariantKey key = variant_key(launch, align, flags, device, args, n);
  {
    std::lock_guard<std::mutex> lock(cache_mutex);
    auto it = variants.find(key);
    if (it != variants.end()) return it->second;
  }
  Variant v;
  {
    py::gil_scoped_acquire gil;
    py::object got = callbacks->compile(launch, py::make_tuple(grid[0], grid[1]),
                                        python_args(args, n), align, flags);
    if (!got.is_none()) {
      auto t = got.cast<py::tuple>();
      std::string binary = t[0].cast<std::string>();
      std::string name = t[1].cast<std::string>();
      v.threads = t[2].cast<unsigned>();
      v.shared = t[3].cast<unsigned>();
      v.kinds = t[4].cast<std::string>();
      v.extra_params = t[5].cast<int>();
      Driver& d = driver();
      CUmodule module = nullptr;
      d.check(d.module_load_data(&module, binary.data()), "cuModuleLoadData");
      d.check(d.module_get_function(&v.function, module, name.c_str()), "cuModuleGetFunction");
      if (v.shared > kStaticSharedLimit) {
        d.check(d.func_set_attribute(v.function, kMaxDynamicSharedAttribute, v.shared),
                "cuFuncSetAttribute");
      }
    }
  }
  std::lock_guard<std::mutex> lock(cache_mutex);
  return variants.emplace(key, std::move(v)).first->second;  // a racing thread's stays
}

// Launch one kernel: through the driver on a GPU, through Python (Triton's own launcher)
// on CPU tensors or where no binary could be loaded.
void launch(int launch_id, std::array<int64_t, 2> grid, const Arg* args, int n, int align,
            int flags, const Tensor& like) {
  if (grid[0] == 0 || grid[1] == 0) return;
  const Variant* v = nullptr;
  if (like.is_cuda() && driver().launch_kernel) {
    driver().use_primary_context(like.get_device());  // before the module's load and the launch
    v = &find_variant(launch_id, grid, args, n, align, flags, like.get_device());
  }
  if (!v || !v->function) {
    py::gil_scoped_acquire gil;
    callbacks->launch(launch_id, py::make_tuple(grid[0], grid[1]), python_args(args, n), align,
                      flags);
    return;
  }
  // the values, then pointers to them, in the order of the kernel's parameters
  std::array<uint64_t, kMaxArgs + 4> values{};
  std::array<void*, kMaxArgs + 4> params{};
  size_t k = 0;
  for (int i = 0; i < n; ++i) {
    const Arg& a = args[i];
    if (a.kind == Arg::kNone) continue;  // absent operands are constexpr None, not parameters
    TORCH_INTERNAL_ASSERT(k < v->kinds.size(), "rmsnorm_kernels: more arguments than parameters");
    char kind = v->kinds[k];
    void* slot = &values[k];
    if (kind == 'p') {
      *static_cast<uint64_t*>(slot) = reinterpret_cast<uint64_t>(a.tensor->data_ptr());
    } else if (kind == 'i') {
      *static_cast<int32_t*>(slot) = static_cast<int32_t>(a.i);
    } else if (kind == 'l') {
      *static_cast<int64_t*>(slot) = a.i;
    } else {
      *static_cast<float*>(slot) = static_cast<float>(a.f);
    }
    params[k] = slot;
    ++k;
  }
  TORCH_INTERNAL_ASSERT(k == v->kinds.size(), "rmsnorm_kernels: fewer arguments than parameters");
  for (int e = 0; e < v->extra_params; ++e, ++k) params[k] = &values[k];  // null scratch
  c10::Stream stream = c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA)->getStream(like.device());
  Driver& d = driver();
  d.check(d.launch_kernel(v->function, static_cast<unsigned>(grid[0]),
                          static_cast<unsigned>(grid[1]), 1, v->threads, 1, 1, v->shared,
                          static_cast<CUstream>(stream.native_handle()), params.data(), nullptr),
          "cuLaunchKernel");
}

// ------------------------------------------------------------------------------------------
// Plans: per cache key, the tuple _plan.py's ForwardPlan / BackwardPlan.native() returns.
// ------------------------------------------------------------------------------------------

int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t next_power_of_2(int64_t n) {
  int64_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

// The part of N that decides the plan (as _plan.bucket_of): block width, 0 past one block, -1
// for rows that stream.
int64_t bucket_of(int64_t n) {
  if (n <= constants.max_single_block_n) return next_power_of_2(n);
  return n >= constants.stream_min_n ? -1 : 0;
}

// The largest power of two up to 16 dividing n and every row stride (the kernels' ALIGN).
int row_alignment(int64_t n, std::initializer_list<int64_t> strides) {
  int64_t g = n;
  for (int64_t s : strides) g = std::gcd(g, s);
  g &= -g;
  return static_cast<int>(std::min<int64_t>(16, g));
}

// (columns per segment, segments) of m rows of n elements split over segments of whole
// blocks of block_n columns, about `programs` programs in all (as _plan.row_segments).
std::pair<int64_t, int64_t> row_segments(int64_t m, int64_t n, int64_t block_n,
                                         int64_t programs, int64_t max_segments) {
  int64_t chunks = cdiv(n, block_n);
  int64_t segments = std::max<int64_t>(1, std::min({cdiv(programs, m), max_segments, chunks}));
  int64_t segment_n = block_n * cdiv(chunks, segments);
  return {segment_n, cdiv(n, segment_n)};
}

// The plan of a call, made once per key by the Python callback. flag: the forward's
// has_residual or the backward's compute_dw; has_dres: the fused backward's (its own plan).
const std::vector<int64_t>& find_plan(bool forward, const Tensor& x, const Tensor* weight,
                                      bool flag, bool has_dres = false) {
  int64_t bucket = bucket_of(x.size(1));
  int w = weight && weight->defined() ? static_cast<int>(weight->scalar_type()) : 63;
  uint64_t key = static_cast<uint64_t>(bucket + 1) | static_cast<uint64_t>(x.scalar_type()) << 20 |
                 static_cast<uint64_t>(w) << 26 | static_cast<uint64_t>(flag) << 32 |
                 static_cast<uint64_t>(forward) << 33 |
                 static_cast<uint64_t>(static_cast<uint8_t>(x.device().type())) << 34 |
                 static_cast<uint64_t>(static_cast<uint8_t>(x.device().index())) << 42 |
                 static_cast<uint64_t>(has_dres) << 50;
  {
    std::lock_guard<std::mutex> lock(cache_mutex);
    auto it = plans.find(key);
    if (it != plans.end()) return it->second;
  }
  std::vector<int64_t> plan;
  {
    py::gil_scoped_acquire gil;
    py::object w_obj = weight && weight->defined() ? py::cast(*weight) : py::none();
    py::object got = forward ? callbacks->forward_plan(x, w_obj, flag)
                             : callbacks->backward_plan(x, w_obj, flag, has_dres);
    plan = got.cast<std::vector<int64_t>>();
  }
  std::lock_guard<std::mutex> lock(cache_mutex);
  return plans.emplace(key, std::move(plan)).first->second;
}

// ------------------------------------------------------------------------------------------
// Input checks: each problem raises a ValueError or TypeError naming it, as the Python path's.
// ------------------------------------------------------------------------------------------

// Shapes and dtypes written as Python writes them: (2, 9), torch.float16.
std::string shape_str(at::IntArrayRef sizes) {
  std::string out = "(";
  for (size_t i = 0; i < sizes.size(); ++i) out += (i ? ", " : "") + std::to_string(sizes[i]);
  return out + (sizes.size() == 1 ? ",)" : ")");
}

std::string dtype_str(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return "torch.float32";
    case at::kHalf: return "torch.float16";
    case at::kBFloat16: return "torch.bfloat16";
    case at::kDouble: return "torch.float64";
    case at::kInt: return "torch.int32";
    case at::kLong: return "torch.int64";
    case at::kShort: return "torch.int16";
    case at::kChar: return "torch.int8";
    case at::kByte: return "torch.uint8";
    case at::kBool: return "torch.bool";
    case at::kComplexHalf: return "torch.complex32";
    case at::kComplexFloat: return "torch.complex64";
    case at::kComplexDouble: return "torch.complex128";
    case at::kFloat8_e4m3fn: return "torch.float8_e4m3fn";
    case at::kFloat8_e5m2: return "torch.float8_e5m2";
    case at::kFloat8_e4m3fnuz: return "torch.float8_e4m3fnuz";
    case at::kFloat8_e5m2fnuz: return "torch.float8_e5m2fnuz";
    default: return std::string("torch.") + c10::toString(t);
  }
}

bool float_dtype(at::ScalarType t) {
  return t == at::kFloat || t == at::kHalf || t == at::kBFloat16;
}

void check_x(const char* name, const Tensor& x) {
  TORCH_CHECK_TYPE(float_dtype(x.scalar_type()),
                   cat(name, " has dtype ", dtype_str(x.scalar_type()),
                       "; expected float32, float16 or bfloat16"));
  TORCH_CHECK_VALUE(x.dim() > 0, cat(name,
                    " must have at least one dimension (the normalised one)"));
  TORCH_CHECK_VALUE(x.size(-1) > 0, cat(name,
                    " has an empty last dimension; there is nothing to normalise"));
  // ops.MAX_ROW_ELEMENTS: the split backward's grid of at most 65,535 column blocks of 8,192
  TORCH_CHECK_VALUE(x.size(-1) <= 536862720, cat(name, " has rows of ", x.size(-1),
                    " elements; rmsnorm_kernels takes at most 536,862,720 a row"));
  if (x.is_cuda()) return;
  TORCH_CHECK_VALUE(x.is_cpu(), cat(name, " is on ", x.device(),
                    "; rmsnorm_kernels runs on CUDA/ROCm GPUs"));
  TORCH_CHECK_VALUE(constants.interpreting, cat(name,
                    " is a CPU tensor but Triton's interpreter is off; move it to a GPU, or set "
                    "TRITON_INTERPRET=1 before importing rmsnorm_kernels to run the kernels on "
                    "the CPU"));
}

void check_weight(const std::optional<Tensor>& weight, const Tensor& x) {
  if (!weight) return;
  const Tensor& w = *weight;
  int64_t n = x.size(-1);
  TORCH_CHECK_VALUE(w.dim() == 1 && w.size(0) == n,
                    cat("weight has shape ", shape_str(w.sizes()), "; expected (", n,
                        ",) to match x's last dimension"));
  TORCH_CHECK_TYPE(w.scalar_type() == x.scalar_type() || w.scalar_type() == at::kFloat,
                   cat("weight has dtype ", dtype_str(w.scalar_type()), "; expected ",
                       dtype_str(x.scalar_type()), " (x's)",
                       x.scalar_type() == at::kFloat ? "" : " or float32"));
  TORCH_CHECK_VALUE(w.device() == x.device(), cat("weight is on ", w.device(), " but x is on ",
                    x.device()));
}

void check_residual(const Tensor& residual, const Tensor& x) {
  TORCH_CHECK_VALUE(residual.sizes() == x.sizes(), cat("residual has shape ",
                    shape_str(residual.sizes()), "; expected x's shape ", shape_str(x.sizes())));
  TORCH_CHECK_TYPE(residual.scalar_type() == x.scalar_type(), cat("residual has dtype ",
                   dtype_str(residual.scalar_type()), "; expected x's dtype ",
                   dtype_str(x.scalar_type())));
  TORCH_CHECK_VALUE(residual.device() == x.device(), cat("residual is on ", residual.device(),
                    " but x is on ", x.device()));
}

void check_eps(double eps) {
  // NaN fails the comparison too
  TORCH_CHECK_VALUE(eps >= 0, cat("eps must be a non-negative number, got ", eps));
}

// A 2-D [M, N] view of t: a copy only when its last dimension is not contiguous.
Tensor rows_of(const Tensor& t) {
  Tensor r = t.dim() == 2 ? t : t.reshape({-1, t.size(-1)});
  return r.stride(1) == 1 || r.size(1) == 1 ? r : r.contiguous();
}

std::optional<Tensor> contiguous_weight(const std::optional<Tensor>& weight) {
  if (!weight || weight->is_contiguous()) return weight;
  return weight->contiguous();
}

// ------------------------------------------------------------------------------------------
// Forward: y = x * rstd * w per row (of x + residual when fused), rstd saved for the backward.
// ------------------------------------------------------------------------------------------

// Returns (y, residual_out or undefined, rstd), y and residual_out in x's shape, rstd in
// x's shape less the last dimension.
std::tuple<Tensor, Tensor, Tensor> forward(const Tensor& x_in, const std::optional<Tensor>& residual_in,
                                           const std::optional<Tensor>& weight_in, double eps) {
  check_x("x", x_in);
  if (residual_in) check_residual(*residual_in, x_in);
  check_weight(weight_in, x_in);
  check_eps(eps);
  c10::OptionalDeviceGuard guard;
  if (x_in.is_cuda()) guard.reset_device(x_in.device());
  Tensor x = rows_of(x_in);
  std::optional<Tensor> weight = contiguous_weight(weight_in);
  const Tensor* w = weight ? &*weight : nullptr;
  int64_t m = x.size(0), n = x.size(1);
  bool has_residual = residual_in.has_value();
  auto lead = x_in.sizes().slice(0, x_in.dim() - 1);
  Tensor y = at::empty(x_in.sizes(), x.options());
  Tensor rstd = at::empty(lead, x.options().dtype(at::kFloat));
  Tensor residual_out = has_residual ? at::empty(x_in.sizes(), x.options()) : Tensor();
  if (m == 0) return {y, residual_out, rstd};
  Tensor r = has_residual ? rows_of(*residual_in) : Tensor();
  const auto& plan = find_plan(true, x, w, has_residual);
  // (main id, block_m, max_programs, few id, few block_m, few max_programs, few_min_m, few_max_m,
  //  split max_m, sum_sq id, scale id, split programs, split block_n, split max segments)
  int64_t sx = x.stride(0), sr = has_residual ? r.stride(0) : 0;
  int align = row_alignment(n, {sx, sr});  // y and residual_out are fresh and contiguous
  if (plan[9] >= 0 && m <= plan[8]) {  // each row over segments: sums of squares, then scaled
    auto [segment_n, segments] = row_segments(m, n, plan[12], plan[11], plan[13]);
    Tensor sq = at::empty({m, segments}, x.options().dtype(at::kFloat));
    Args sum_args = {tensor_arg(x), int_arg(sx), optional_arg(has_residual ? &r : nullptr),
                     int_arg(sr), optional_arg(has_residual ? &residual_out : nullptr),
                     int_arg(n), tensor_arg(sq), int_arg(n), int_arg(segment_n),
                     int_arg(segments)};
    launch(static_cast<int>(plan[9]), {m * segments, 1}, sum_args.data(), 10, align, 0, x);
    const Tensor& in = has_residual ? residual_out : x;
    int64_t s_in = has_residual ? n : sx;
    Args scale_args = {tensor_arg(in), int_arg(s_in), optional_arg(w), tensor_arg(y),
                       int_arg(n), tensor_arg(rstd), tensor_arg(sq), int_arg(n),
                       int_arg(segment_n), int_arg(segments), float_arg(eps)};
    launch(static_cast<int>(plan[10]), {m * segments, 1}, scale_args.data(), 11,
           row_alignment(n, {s_in}), 0, x);
    return {y, residual_out, rstd};
  }
  bool few = plan[3] >= 0 && plan[6] < m && m <= plan[7];
  int64_t id = few ? plan[3] : plan[0], block_m = few ? plan[4] : plan[1];
  int64_t max_programs = few ? plan[5] : plan[2];
  int64_t blocks = cdiv(m, block_m);
  int64_t programs = max_programs ? std::min(blocks, max_programs) : blocks;
  Args args = {tensor_arg(x), int_arg(sx), optional_arg(has_residual ? &r : nullptr),
               int_arg(sr), optional_arg(w), tensor_arg(y), int_arg(n),
               optional_arg(has_residual ? &residual_out : nullptr), int_arg(n),
               tensor_arg(rstd), int_arg(m), int_arg(n), float_arg(eps)};
  launch(static_cast<int>(id), {programs, 1}, args.data(), 13, align, 0, x);
  return {y, residual_out, rstd};
}

// ------------------------------------------------------------------------------------------
// Backward, on the rows that were normalised (x, or residual_out when fused):
// dx = rstd * (g - xhat * mean(g * xhat)) (+ d_residual_out), dw = sum over rows of dy * xhat.
// ------------------------------------------------------------------------------------------

constexpr int kHasDres = 1, kReduceDw = 2, kHasDxCopy = 4;  // _plan.BACKWARD_FLAGS
constexpr int64_t kMaxGridY = 65535;  // _config.MAX_GRID_Y

// dx_copy: dx written a second time, into a buffer of its own (see FusedAddRMSNormNode)
std::tuple<Tensor, Tensor, Tensor> backward(const Tensor& dy_in, const Tensor& x_in,
                                            const std::optional<Tensor>& weight_in,
                                            const Tensor& rstd,
                                            const std::optional<Tensor>& dres_in,
                                            bool compute_dw, bool dx_copy) {
  check_x("x", x_in);
  TORCH_CHECK_VALUE(dy_in.sizes() == x_in.sizes() && dy_in.scalar_type() == x_in.scalar_type(), cat("the output gradient has shape ", shape_str(dy_in.sizes()), " and dtype ",
                    dtype_str(dy_in.scalar_type()), "; expected x's ", shape_str(x_in.sizes()),
                    " and ", dtype_str(x_in.scalar_type())));
  if (dres_in) check_residual(*dres_in, x_in);
  check_weight(weight_in, x_in);
  c10::OptionalDeviceGuard guard;
  if (x_in.is_cuda()) guard.reset_device(x_in.device());
  Tensor x = rows_of(x_in), dy = rows_of(dy_in);
  std::optional<Tensor> weight = contiguous_weight(weight_in);
  const Tensor* w = weight ? &*weight : nullptr;
  Tensor r = rstd.is_contiguous() ? rstd : rstd.contiguous();
  int64_t m = x.size(0), n = x.size(1);
  compute_dw = compute_dw && w;
  Tensor dx = at::empty(x_in.sizes(), x.options());
  Tensor dx2 = dx_copy ? at::empty(x_in.sizes(), x.options()) : Tensor();
  Tensor dw;
  if (compute_dw) dw = m == 0 ? at::zeros_like(*w) : at::empty_like(*w);
  if (m == 0) return {dx, dw, dx2};
  const auto& plan = find_plan(false, x, w, compute_dw, dres_in.has_value());
  // (main id, block_m, block_n, few id, few block_m, few block_n, few_max_m, split_row,
  //  max_programs, dot_programs, row_dot id, reduce id, reduce block_n,
  //  small id, small block_m, small dw_block_n, small max_m, small segment_block_n,
  //  small programs, small max_segments, walk id, walk programs)
  std::optional<Tensor> dres;
  if (dres_in) dres = rows_of(*dres_in);
  int64_t sdy = dy.stride(0), sx = x.stride(0), sdres = dres ? dres->stride(0) : 0;
  int align = row_alignment(n, {sdy, sx, sdres});  // dx is fresh and contiguous
  if (plan[13] >= 0 && m <= plan[16]) {
    // one launch: row programs (dx), then column programs (dweight over all rows); one row
    // program alone writes dweight itself; segmented, each row over segments (_plan.SmallBackward)
    int64_t columns = plan[15] ? cdiv(n, plan[15]) : 0;
    int64_t row_programs = cdiv(m, plan[14]), segment_n = n, segments = 1;
    if (plan[17]) {
      std::tie(segment_n, segments) = row_segments(m, n, plan[17], plan[18], plan[19]);
      row_programs = m * segments;
    } else if (row_programs == 1) {
      columns = 0;
    }
    Args args = {tensor_arg(dy), int_arg(sdy), tensor_arg(x), int_arg(sx), optional_arg(w),
                 tensor_arg(r), optional_arg(dres ? &*dres : nullptr), int_arg(sdres),
                 tensor_arg(dx), int_arg(n), optional_arg(dx_copy ? &dx2 : nullptr),
                 optional_arg(compute_dw ? &dw : nullptr), int_arg(m), int_arg(n),
                 int_arg(row_programs), int_arg(segment_n), int_arg(segments)};
    int flags = (dres ? kHasDres : 0) | (dx_copy ? kHasDxCopy : 0);
    launch(static_cast<int>(plan[13]), {row_programs + columns, 1}, args.data(), 17, align, flags,
           x);
    return {dx, dw, dx2};
  }
  if (plan[20] >= 0) {
    // split rows past the small backward's: programs walk the rows, one row at a time, each
    // adding its dweight share to its own row of partials, then their sum (_plan.WalkBackward)
    int64_t programs = std::min(m, plan[21]);
    Tensor partial =
        compute_dw ? at::empty({programs, n}, x.options().dtype(at::kFloat)) : Tensor();
    Args args = {tensor_arg(dy), int_arg(sdy), tensor_arg(x), int_arg(sx), optional_arg(w),
                 tensor_arg(r), optional_arg(dres ? &*dres : nullptr), int_arg(sdres),
                 tensor_arg(dx), int_arg(n), optional_arg(dx_copy ? &dx2 : nullptr),
                 optional_arg(compute_dw ? &partial : nullptr), int_arg(m), int_arg(n)};
    int flags = (dres ? kHasDres : 0) | (dx_copy ? kHasDxCopy : 0);
    launch(static_cast<int>(plan[20]), {programs, 1}, args.data(), 14, align, flags, x);
    if (compute_dw) {
      Args reduce_args = {tensor_arg(partial), tensor_arg(dw), int_arg(programs), int_arg(n)};
      launch(static_cast<int>(plan[11]), {cdiv(n, plan[12]), 1}, reduce_args.data(), 4,
             row_alignment(n, {}), 0, x);
    }
    return {dx, dw, dx2};
  }
  // the few rows' tile, where split rows' column blocks of its width fit a grid (_plan.for_rows)
  bool few = plan[3] >= 0 && m <= plan[6] && !(plan[7] && cdiv(n, plan[5]) > kMaxGridY);
  int64_t id = few ? plan[3] : plan[0], block_m = few ? plan[4] : plan[1];
  int64_t block_n = few ? plan[5] : plan[2];
  bool split_row = plan[7];
  int64_t max_programs = plan[8];
  std::array<int64_t, 2> grid;
  if (split_row) {
    int64_t col_blocks = cdiv(n, block_n);
    grid = {std::min(cdiv(m, block_m), std::max<int64_t>(1, max_programs / col_blocks)),
            col_blocks};
  } else {
    grid = {std::min(cdiv(m, block_m), max_programs), 1};
  }
  bool reduce_dw = compute_dw && grid[0] > 1;
  Tensor partial = reduce_dw ? at::empty({grid[0], n}, x.options().dtype(at::kFloat)) : Tensor();
  int flags = (dres ? kHasDres : 0) | (reduce_dw ? kReduceDw : 0) | (dx_copy ? kHasDxCopy : 0);
  Tensor dot;
  int64_t segments = 0;
  if (split_row) {  // first pass: each row's sum of g * x, in segments
    int64_t segment_n;
    std::tie(segment_n, segments) =
        row_segments(m, n, constants.dot_block_n, plan[9], constants.dot_segments);
    dot = at::empty({m, segments}, x.options().dtype(at::kFloat));
    Args dot_args = {tensor_arg(dy), int_arg(sdy), tensor_arg(x), int_arg(sx), optional_arg(w),
                     tensor_arg(dot), int_arg(n), int_arg(segment_n), int_arg(segments)};
    launch(static_cast<int>(plan[10]), {m * segments, 1}, dot_args.data(), 9, align, 0, x);
  }
  Args args = {tensor_arg(dy), int_arg(sdy), tensor_arg(x), int_arg(sx), optional_arg(w),
               tensor_arg(r), optional_arg(dres ? &*dres : nullptr), int_arg(sdres),
               tensor_arg(dx), int_arg(n), optional_arg(dx_copy ? &dx2 : nullptr),
               optional_arg(reduce_dw ? &partial : nullptr),
               optional_arg(compute_dw && !reduce_dw ? &dw : nullptr),
               optional_arg(split_row ? &dot : nullptr), int_arg(m), int_arg(n),
               int_arg(segments)};
  launch(static_cast<int>(id), grid, args.data(), 17, align, flags, x);
  if (reduce_dw) {
    Args reduce_args = {tensor_arg(partial), tensor_arg(dw), int_arg(grid[0]), int_arg(n)};
    launch(static_cast<int>(plan[11]), {cdiv(n, plan[12]), 1}, reduce_args.data(), 4,
           row_alignment(n, {}), 0, x);
  }
  return {dx, dw, dx2};
}

// ------------------------------------------------------------------------------------------
// The operators' kernels (CPU and CUDA alike), then autograd in C++: the backward node runs
// on the autograd engine's thread with no Python.
// ------------------------------------------------------------------------------------------

std::tuple<Tensor, Tensor> rms_norm_fwd(const Tensor& x, const std::optional<Tensor>& weight,
                                        double eps) {
  auto [y, unused, rstd] = forward(x, std::nullopt, weight, eps);
  return {y, rstd};
}

std::tuple<Tensor, Tensor, Tensor> fused_add_rms_norm_fwd(const Tensor& x, const Tensor& residual,
                                                          const std::optional<Tensor>& weight,
                                                          double eps) {
  return forward(x, residual, weight, eps);  // residual: x's shape, dtype and device
}

std::tuple<Tensor, Tensor, Tensor> rms_norm_bwd(const Tensor& dy, const Tensor& x,
                                                const std::optional<Tensor>& weight,
                                                const Tensor& rstd,
                                                const std::optional<Tensor>& d_residual_out,
                                                bool compute_dw, bool dx_copy) {
  auto [dx, dw, dx2] = backward(dy, x, weight, rstd, d_residual_out, compute_dw, dx_copy);
  // the schema returns tensors: an empty one where dweight or dx's copy is not computed
  auto absent = [&] { return at::empty({0}, x.options()); };
  return {dx, dw.defined() ? dw : absent(), dx2.defined() ? dx2 : absent()};
}

template <typename Signature>
c10::TypedOperatorHandle<Signature> op(const char* name) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, "").typed<Signature>();
}

std::optional<Tensor> optional(const Tensor& t) {  // undefined: absent
  return t.defined() ? std::optional<Tensor>(t) : std::nullopt;
}

using BackwardSignature = std::tuple<Tensor, Tensor, Tensor>(
    const Tensor&, const Tensor&, const std::optional<Tensor>&, const Tensor&,
    const std::optional<Tensor>&, bool, bool);

// Gradients of x (and residual), weight and dx's copy through the backward operator.
std::tuple<Tensor, Tensor, Tensor> backward_op(const Tensor& dy, const Tensor& x,
                                               const Tensor& weight, const Tensor& rstd,
                                               const Tensor& d_residual_out, bool compute_dw,
                                               bool dx_copy) {
  static auto bwd = op<BackwardSignature>("rmsnorm_kernels::rms_norm_bwd");
  auto [dx, dw, dx2] = bwd.call(dy, x, optional(weight), rstd, optional(d_residual_out),
                                compute_dw, dx_copy);
  return {dx, compute_dw ? dw : Tensor(), dx_copy ? dx2 : Tensor()};
}

// The backward operator under autograd: its results are not differentiable, so a backward
// that would record a graph through it (create_graph=True, double backward) is refused.
std::tuple<Tensor, Tensor, Tensor> rms_norm_bwd_autograd(
    const Tensor& dy, const Tensor& x, const std::optional<Tensor>& weight, const Tensor& rstd,
    const std::optional<Tensor>& d_residual_out, bool compute_dw, bool dx_copy) {
  bool grad_in = dy.requires_grad() || x.requires_grad() ||
                 (weight && weight->requires_grad()) ||
                 (d_residual_out && d_residual_out->requires_grad());
  TORCH_CHECK(!(grad_in && torch::autograd::GradMode::is_enabled()), cat("rmsnorm_kernels: double backward (create_graph=True) is not supported; use "
              "torch.nn.functional.rms_norm where second derivatives are needed"));
  at::AutoDispatchBelowADInplaceOrView below;
  static auto bwd = op<BackwardSignature>("rmsnorm_kernels::rms_norm_bwd");
  return bwd.call(dy, x, weight, rstd, d_residual_out, compute_dw, dx_copy);
}

struct RMSNormNode : public torch::autograd::Function<RMSNormNode> {
  // graph: whether a backward can follow (asked by the caller: forward runs with grad off)
  static variable_list forward(AutogradContext* ctx, const Tensor& x,
                               const std::optional<Tensor>& weight, double eps, bool graph) {
    at::AutoDispatchBelowADInplaceOrView below;
    static auto fwd = op<std::tuple<Tensor, Tensor>(const Tensor&, const std::optional<Tensor>&,
                                                    double)>("rmsnorm_kernels::rms_norm_fwd");
    auto [y, rstd] = fwd.call(x, weight, eps);
    // an inference-mode tensor (made under torch.inference_mode) cannot be saved, its copy
    // can: F.rms_norm takes such an x where only the weight needs a gradient. Copied only
    // where a backward can follow (otherwise what is saved is never kept)
    ctx->save_for_backward(
        {x.is_inference() && graph ? x.clone() : x, weight.value_or(Tensor()), rstd});
    ctx->mark_non_differentiable({rstd});
    // rstd's gradient stays undefined: materialised, it would cost a zeros kernel per call
    ctx->set_materialize_grads(false);
    return {y, rstd};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    if (!grads[0].defined()) return {Tensor(), Tensor(), Tensor(), Tensor()};
    auto saved = ctx->get_saved_variables();
    bool compute_dw = saved[1].defined() && ctx->needs_input_grad(1);
    auto [dx, dw, unused] =
        backward_op(grads[0], saved[0], saved[1], saved[2], Tensor(), compute_dw, false);
    return {dx, dw, Tensor(), Tensor()};
  }
};

// Whether the fused backward writes its gradient twice: where x and residual are two leaves
// that need it and have no .grad yet, each keeps the tensor it receives as its .grad. Given
// one tensor for both, autograd would copy it for one of them (a read and a write of M x N
// more, and a second buffer); two views of one buffer would make their .grads share memory,
// and an accumulation into one would add to the other. Elsewhere one tensor serves both:
// activations (as in a model) pass it on, and a .grad that exists takes it by an in-place
// add. (torch.autograd.grad, which fills no .grad, then gets two buffers where one would do:
// the forward cannot know how the backward will be asked for.) Tensors of a trace
// (torch.compile's fake and functional tensors, Python subclasses) never count: the inputs of
// a traced graph are leaves there whatever they are in the model. ops._two_leaves decides
// the same on the Python path, whose autograd Functions never see a trace.
bool two_leaves(const Tensor& x, const Tensor& residual) {
  auto traced = [](const Tensor& t) {
    return t.key_set().has_any(
        c10::DispatchKeySet({c10::DispatchKey::Python, c10::DispatchKey::Functionalize}));
  };
  return !x.is_same(residual) && x.requires_grad() && residual.requires_grad() && x.is_leaf() &&
         residual.is_leaf() && !x.grad().defined() && !residual.grad().defined() &&
         !traced(x) && !traced(residual);
}

struct FusedAddRMSNormNode : public torch::autograd::Function<FusedAddRMSNormNode> {
  static variable_list forward(AutogradContext* ctx, const Tensor& x, const Tensor& residual,
                               const std::optional<Tensor>& weight, double eps) {
    at::AutoDispatchBelowADInplaceOrView below;
    static auto fwd = op<std::tuple<Tensor, Tensor, Tensor>(
        const Tensor&, const Tensor&, const std::optional<Tensor>&, double)>(
        "rmsnorm_kernels::fused_add_rms_norm_fwd");
    auto [y, residual_out, rstd] = fwd.call(x, residual, weight, eps);
    ctx->save_for_backward({residual_out, weight.value_or(Tensor()), rstd});
    // x + residual does not depend on the weight: where only the weight needs a gradient,
    // residual_out needs none (as torch's x + residual)
    if (x.requires_grad() || residual.requires_grad()) {
      ctx->mark_non_differentiable({rstd});
    } else {
      ctx->mark_non_differentiable({rstd, residual_out});
    }
    ctx->set_materialize_grads(false);  // an unused output's gradient stays undefined
    // recorded only where it holds (rare: leaves), so that a model's call inserts nothing
    if (two_leaves(x, residual)) ctx->saved_data["dx_copy"] = true;
    return {y, residual_out, rstd};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const Tensor &dy = grads[0], &d_residual_out = grads[1];
    if (!dy.defined()) return {d_residual_out, d_residual_out, Tensor(), Tensor()};
    auto saved = ctx->get_saved_variables();
    bool compute_dw = saved[1].defined() && ctx->needs_input_grad(2);
    bool dx_copy = ctx->saved_data.count("dx_copy") > 0;
    auto [ds, dw, ds2] =
        backward_op(dy, saved[0], saved[1], saved[2], d_residual_out, compute_dw, dx_copy);
    // x and residual receive the same gradient, never as two views of one buffer (see
    // two_leaves)
    return {ds, dx_copy ? ds2 : ds, dw, Tensor()};
  }
};

std::tuple<Tensor, Tensor> rms_norm_fwd_autograd(const Tensor& x,
                                                 const std::optional<Tensor>& weight,
                                                 double eps) {
  bool graph = torch::autograd::GradMode::is_enabled() &&
               (x.requires_grad() || (weight && weight->requires_grad()));
  auto out = RMSNormNode::apply(x, weight, eps, graph);
  return {out[0], out[1]};
}

std::tuple<Tensor, Tensor, Tensor> fused_add_rms_norm_fwd_autograd(
    const Tensor& x, const Tensor& residual, const std::optional<Tensor>& weight, double eps) {
  auto out = FusedAddRMSNormNode::apply(x, residual, weight, eps);
  return {out[0], out[1], out[2]};
}

// torch.autocast: the norm runs in the dtype that the installed torch's F.rms_norm gives under
// the autocast in force. Torch versions differ here (some list rms_norm among CUDA's float32
// operators, others leave it in x's dtype), so the answer is asked of torch itself: a
// one-element aten::rms_norm on x's device, with autocast still on, once per (device type,
// autocast dtype, x's dtype, with or without a weight; the probe's weight is in x's dtype, as
// one in another dtype has torch warn that its fused kernel is not used, and autocast's rules
// do not depend on it). Where that dtype is not x's, x, residual and weight are cast to it,
// as the policy casts them; otherwise they go in as they are. The fused operator keeps
// residual_out in x's dtype, as torch's x + residual outside the norm would be: cast to
// float32, the fused sum is that sum, rounded once to x's dtype (the norm reads it
// unrounded); a rule to a narrower dtype would round it there, so there the sum is torch's
// add and the norm reads it cast (no torch known has such a rule for rms_norm). Python's
// ops._autocast_dtype is the same rule for the Python path.
using AutocastKey = std::tuple<int, int, int, bool>;
std::mutex autocast_mutex;  // guards the map below; never held while torch runs
std::map<AutocastKey, at::ScalarType> autocast_dtypes;

at::ScalarType autocast_norm_dtype(const Tensor& x, const std::optional<Tensor>& weight) {
  auto device = x.device().type();
  AutocastKey key{static_cast<int>(device),
                  static_cast<int>(at::autocast::get_autocast_dtype(device)),
                  static_cast<int>(x.scalar_type()), weight.has_value()};
  {
    std::lock_guard<std::mutex> lock(autocast_mutex);
    auto found = autocast_dtypes.find(key);
    if (found != autocast_dtypes.end()) return found->second;
  }
  at::NoGradGuard no_grad;
  auto probe = at::ones({1, 1}, x.options());
  std::optional<Tensor> probe_weight;
  if (weight) probe_weight = probe[0];
  auto dtype = at::rms_norm(probe, {1}, probe_weight, std::nullopt).scalar_type();
  std::lock_guard<std::mutex> lock(autocast_mutex);
  autocast_dtypes.emplace(key, dtype);
  return dtype;
}

Tensor cast_to(const Tensor& t, at::ScalarType dtype) {  // floating inputs, float64 kept
  bool cast = t.is_floating_point() && t.scalar_type() != at::kDouble && t.scalar_type() != dtype;
  return cast ? t.to(dtype) : t;
}

std::optional<Tensor> cast_to(const std::optional<Tensor>& t, at::ScalarType dtype) {
  return t ? std::optional<Tensor>(cast_to(*t, dtype)) : std::nullopt;
}

const c10::DispatchKeySet autocast_keys({c10::DispatchKey::AutocastCPU,
                                         c10::DispatchKey::AutocastCUDA});

std::tuple<Tensor, Tensor> rms_norm_fwd_autocast(const Tensor& x,
                                                 const std::optional<Tensor>& weight,
                                                 double eps) {
  auto dtype = autocast_norm_dtype(x, weight);
  c10::impl::ExcludeDispatchKeyGuard no_autocast(autocast_keys);
  static auto fwd = op<std::tuple<Tensor, Tensor>(const Tensor&, const std::optional<Tensor>&,
                                                  double)>("rmsnorm_kernels::rms_norm_fwd");
  if (dtype == x.scalar_type()) return fwd.call(x, weight, eps);
  return fwd.call(cast_to(x, dtype), cast_to(weight, dtype), eps);
}

std::tuple<Tensor, Tensor, Tensor> fused_add_rms_norm_fwd_autocast(
    const Tensor& x, const Tensor& residual, const std::optional<Tensor>& weight, double eps) {
  auto dtype = autocast_norm_dtype(x, weight);
  c10::impl::ExcludeDispatchKeyGuard no_autocast(autocast_keys);
  static auto fwd = op<std::tuple<Tensor, Tensor, Tensor>(
      const Tensor&, const Tensor&, const std::optional<Tensor>&, double)>(
      "rmsnorm_kernels::fused_add_rms_norm_fwd");
  if (dtype == x.scalar_type()) return fwd.call(x, residual, weight, eps);
  if (dtype != at::kFloat) {  // a rule to a narrower dtype would round the fused sum there
    static auto norm = op<std::tuple<Tensor, Tensor>(
        const Tensor&, const std::optional<Tensor>&, double)>("rmsnorm_kernels::rms_norm_fwd");
    auto residual_out = x.add(residual);  // torch's add, in x's dtype
    auto [y, rstd] = norm.call(cast_to(residual_out, dtype), cast_to(weight, dtype), eps);
    return {y, residual_out, rstd};
  }
  auto [y, residual_out, rstd] =
      fwd.call(cast_to(x, dtype), cast_to(residual, dtype), cast_to(weight, dtype), eps);
  return {y, residual_out.to(x.scalar_type()), rstd};
}

// torch.vmap: no batching rule; say so instead of failing inside the generic fallback.
void vmap_unsupported(const c10::OperatorHandle& op, torch::jit::Stack*) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, cat("rmsnorm_kernels does not support torch.vmap (",
                              op.schema().name(), "); apply it to the batched tensor directly: "
                              "it normalises the last dimension of inputs of any rank"));
}

// Sparse tensors: named, as the Python path's check names them (the dispatcher would say
// only that no kernel is registered for the sparse backend).
void layout_unsupported(const c10::OperatorHandle& op, torch::jit::Stack*) {
  TORCH_CHECK_TYPE(false, cat("rmsnorm_kernels (", op.schema().name(), ") takes dense "
                   "(strided) tensors; convert a sparse one with .to_dense()"));
}

}  // namespace

TORCH_LIBRARY(rmsnorm_kernels, m) {
  m.def("rms_norm_fwd(Tensor x, Tensor? weight, float eps) -> (Tensor, Tensor)");
  m.def(
      "fused_add_rms_norm_fwd(Tensor x, Tensor residual, Tensor? weight, float eps)"
      " -> (Tensor, Tensor, Tensor)");
  m.def(
      "rms_norm_bwd(Tensor dy, Tensor x, Tensor? weight, Tensor rstd, Tensor? d_residual_out,"
      " bool compute_dw, bool dx_copy=False) -> (Tensor, Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(rmsnorm_kernels, CPU, m) {
  m.impl("rms_norm_fwd", &rms_norm_fwd);
  m.impl("fused_add_rms_norm_fwd", &fused_add_rms_norm_fwd);
  m.impl("rms_norm_bwd", &rms_norm_bwd);
}

TORCH_LIBRARY_IMPL(rmsnorm_kernels, CUDA, m) {
  m.impl("rms_norm_fwd", &rms_norm_fwd);
  m.impl("fused_add_rms_norm_fwd", &fused_add_rms_norm_fwd);
  m.impl("rms_norm_bwd", &rms_norm_bwd);
}

TORCH_LIBRARY_IMPL(rmsnorm_kernels, AutocastCUDA, m) {  // the backward falls through
  m.impl("rms_norm_fwd", &rms_norm_fwd_autocast);
  m.impl("fused_add_rms_norm_fwd", &fused_add_rms_norm_fwd_autocast);
}

TORCH_LIBRARY_IMPL(rmsnorm_kernels, AutocastCPU, m) {  // Triton's interpreter: the same rule
  m.impl("rms_norm_fwd", &rms_norm_fwd_autocast);
  m.impl("fused_add_rms_norm_fwd", &fused_add_rms_norm_fwd_autocast);
}

TORCH_LIBRARY_IMPL(rmsnorm_kernels, Autograd, m) {
  m.impl("rms_norm_fwd", &rms_norm_fwd_autograd);
  m.impl("fused_add_rms_norm_fwd", &fused_add_rms_norm_fwd_autograd);
  m.impl("rms_norm_bwd", &rms_norm_bwd_autograd);
}

// Dispatch keys whose tensors every operator refuses, each with the refusal that says why.
#define RMSNORM_KERNELS_REFUSE(key, refusal)                                              \
  TORCH_LIBRARY_IMPL(rmsnorm_kernels, key, m) {                                           \
    for (const char* name : {"rms_norm_fwd", "fused_add_rms_norm_fwd", "rms_norm_bwd"}) { \
      m.impl(name, torch::CppFunction::makeFromBoxedFunction<&refusal>());               \
    }                                                                                     \
  }
RMSNORM_KERNELS_REFUSE(FuncTorchBatched, vmap_unsupported)
RMSNORM_KERNELS_REFUSE(SparseCPU, layout_unsupported)
RMSNORM_KERNELS_REFUSE(SparseCUDA, layout_unsupported)
RMSNORM_KERNELS_REFUSE(SparseCsrCPU, layout_unsupported)
RMSNORM_KERNELS_REFUSE(SparseCsrCUDA, layout_unsupported)

PYBIND11_MODULE(TORCH_EXTENSION_NAME, module) {
  module.def(
      "configure",
      [](py::dict c, py::object forward_plan, py::object backward_plan, py::object compile,
         py::object launch) {
        constants.max_single_block_n = c["max_single_block_n"].cast<int64_t>();
        constants.stream_min_n = c["stream_min_n"].cast<int64_t>();
        constants.dot_block_n = c["dot_block_n"].cast<int64_t>();
        constants.dot_segments = c["dot_segments"].cast<int64_t>();
        constants.interpreting = c["interpreting"].cast<bool>();
        callbacks = new Callbacks{forward_plan, backward_plan, compile, launch};
      },
      "Set the configuration constants and the callbacks into Python (once, at import).");
  module.def("driver_found", [] { return driver().launch_kernel != nullptr; },
             "Whether libcuda's launch entry points were found.");
  module.def(
      "clear_caches",
      [] {
        {
          std::lock_guard<std::mutex> lock(cache_mutex);
          variants.clear();
          plans.clear();
        }
        std::lock_guard<std::mutex> lock(autocast_mutex);
        autocast_dtypes.clear();
      },
      "Forget every plan, loaded variant and autocast dtype asked of torch (tests count "
      "compilations from zero, and change torch's autocast rule).");
  module.def(
      "cached_variants",
      [] {
        std::lock_guard<std::mutex> lock(cache_mutex);
        return variants.size();
      },
      "How many compiled variants this process has looked up.");
}
