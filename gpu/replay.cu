// bwsim GPU replay harness: runs a scenario's GPU work for real for `bwsim replay`:
// PCIe copies (pinned or pageable), sppark NTT / MSM kernels, a device spin kernel,
// VRAM permits as real allocations, and NVML sampling (utilization.gpu, power).
//
// Protocol: one request per stdin line, `<id> <command> <args...>`; every request runs
// on its own host thread and CUDA stream (streams are pooled, so copies and kernels overlap
// as they do in the pipeline) and answers one JSON line on stdout carrying the same "id".
// Replies come in completion order. Failures answer {"id":N,"ok":false,"error":"..."}.
//
//   info                         -> gpu name, vram_bytes, free_bytes, nvml (loadable)
//   alloc <bytes>                -> {"handle":H}   (stream-ordered cudaMallocAsync)
//   free <handle>
//   copy <h2d|d2h> <bytes> <pinned 0|1>
//                                -> {"gpu_ms":..}  CUDA-event time of the whole copy,
//                                   in chunks of up to 256 MiB from/to staging buffers
//   prepare ntt <lg>             -> {"ms":..}      one unit alone (inverse NR + forward
//                                   coset RN over 2^lg scalars, as supraseal's H phase)
//   prepare msm <lg>             -> {"ms":..}      one G1 MSM of 2^lg points alone
//                                   (points uploaded to the device once, here)
//   ntt <lg> <reps>              -> {"gpu_ms":..}  reps units, CUDA-event time
//   msm <lg> <reps>              -> {"gpu_ms":..}  reps MSMs, host wall time (sppark's
//                                   MSM syncs internally; MSMs are serialised here)
//   prepare msm_host <lg> <pinned 0|1>
//                                -> {"ms":..}      one MSM alone that reads its points
//                                   from host memory as it runs (below)
//   msm_host <lg> <reps> <pinned 0|1>
//                                -> {"gpu_ms":..}  reps MSMs reading their points from
//                                   host memory (pinned or pageable): sppark uploads them
//                                   batch by batch beside the compute, as supraseal's
//                                   H and tail MSMs do with the SRS points
//   spin <us>                    -> {"gpu_ms":..}  one-block kernel spinning <us> µs
//   nvml_start <period_ms>       -> sampling thread on
//   nvml_stop                    -> {"samples":[[t_s, util_pct, power_w], ...]}
//   quit                         -> waits for requests in flight (at most 60 s), exits
// Exit code 3 at start-up: no usable CUDA device. BWSIM_GPU_TRACE=<file> appends one
// line per reply (see reply()).
//
// Build: gpu/build.sh (same flags and sources as the probe harness).

#include <cuda.h>
#include <cuda_runtime.h>

#include <ff/bls12-381.hpp>
#include <ec/jacobian_t.hpp>
#include <ec/xyzz_t.hpp>

typedef jacobian_t<fp_t> point_t;
typedef xyzz_t<fp_t> bucket_t;
typedef bucket_t::affine_t affine_t;
typedef fr_t scalar_t;

#include <msm/pippenger.cuh>
#include <ntt/ntt.cuh>

// blst entry points (its public header clashes with sppark's internal vect.h).
struct bp1 { uint64_t x[6], y[6], z[6]; };
struct bp1a { uint64_t x[6], y[6]; };
typedef unsigned char byte;
extern "C" {
const bp1* blst_p1_generator();
void blst_p1_mult(bp1* out, const bp1* p, const byte* scalar, size_t nbits);
void blst_p1_add_or_double(bp1* out, const bp1* a, const bp1* b);
void blst_p1s_to_affine(bp1a dst[], const bp1* const points[], size_t npoints);
}

#include <dlfcn.h>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using clk = std::chrono::steady_clock;

static double ms_since(clk::time_point t0)
{
    return std::chrono::duration<double, std::milli>(clk::now() - t0).count();
}

static std::mutex g_out;

// BWSIM_GPU_TRACE=<file>: one line per reply: when the request was read (s since start),
// host ms from reading it to replying, the command, the reply. It shows the harness's own
// cost beside the device time it reports.
static FILE* g_trace = nullptr;
static const clk::time_point g_start = clk::now();
thread_local clk::time_point t_read = clk::now();
thread_local std::string t_cmd;

static void reply(unsigned long long id, const std::string& body)
{
    std::lock_guard<std::mutex> l(g_out);
    printf("{\"id\":%llu,%s}\n", id, body.c_str());
    fflush(stdout);
    if (g_trace) {
        double at = std::chrono::duration<double>(t_read - g_start).count();
        fprintf(g_trace, "%.6f %.3f %s %s\n", at, ms_since(t_read), t_cmd.c_str(), body.c_str());
    }
}

static void fail(unsigned long long id, const std::string& what)
{
    std::string s = what;
    for (auto& c : s)
        if (c == '"' || c == '\\' || c == '\n') c = '\'';
    reply(id, "\"ok\":false,\"error\":\"" + s + "\"");
}

#define CK(call)                                                              \
    do {                                                                      \
        cudaError_t e_ = (call);                                              \
        if (e_ != cudaSuccess)                                                \
            throw std::runtime_error(std::string(#call) + ": " +              \
                                     cudaGetErrorString(e_));                 \
    } while (0)

// ------------------------------------------------------------ staging ----

static const size_t CHUNK = (size_t)256 << 20;

struct Staging {
    std::once_flag once;
    void* pinned_src = nullptr;  // h2d source
    void* pinned_dst = nullptr;  // d2h destination
    void* pageable_src = nullptr;
    void* pageable_dst = nullptr;
    void* dev_in = nullptr;      // h2d destination
    void* dev_out = nullptr;     // d2h source
};
static Staging g_stage;

// Writes a distinct 64-bit word at every position of `bytes` (first touch by this thread).
static void distinct_words(void* p, size_t bytes, uint64_t seed)
{
    uint64_t* w = (uint64_t*)p;
    for (size_t i = 0; i < bytes / 8; i++) w[i] = (i + seed) * 0x9E3779B97F4A7C15ULL;
}

static void staging_init()
{
    CK(cudaMallocHost(&g_stage.pinned_src, CHUNK));
    CK(cudaMallocHost(&g_stage.pinned_dst, CHUNK));
    g_stage.pageable_src = aligned_alloc(4096, CHUNK);
    g_stage.pageable_dst = aligned_alloc(4096, CHUNK);
    if (!g_stage.pageable_src || !g_stage.pageable_dst)
        throw std::runtime_error("host staging allocation failed");
    // Distinct words on every page, as a pipeline's data and as `bwsim calibrate`'s PCIe
    // probe writes them (pages of one repeated byte are what a hypervisor can merge onto
    // shared host pages): the replay's pageable uploads should meet the buffers the
    // calibration's rate was measured on.
    distinct_words(g_stage.pinned_src, CHUNK, 1);
    distinct_words(g_stage.pinned_dst, CHUNK, 2);
    distinct_words(g_stage.pageable_src, CHUNK, 3);
    distinct_words(g_stage.pageable_dst, CHUNK, 4);
    CK(cudaMalloc(&g_stage.dev_in, CHUNK));
    CK(cudaMalloc(&g_stage.dev_out, CHUNK));
    CK(cudaMemset(g_stage.dev_out, 5, CHUNK));
}

static void staging()
{
    std::exception_ptr err;
    std::call_once(g_stage.once, [&]() {
        try {
            staging_init();
        } catch (...) {
            err = std::current_exception();
        }
    });
    if (err) std::rethrow_exception(err);
    if (!g_stage.dev_in) throw std::runtime_error("copy staging failed earlier");
}

// Times work on its own stream with CUDA events.
struct Timed {
    cudaStream_t s;
    cudaEvent_t e0, e1;
    Timed()
    {
        CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
    }
    ~Timed()
    {
        (void)cudaEventDestroy(e0);
        (void)cudaEventDestroy(e1);
        (void)cudaStreamDestroy(s);
    }
    void begin() { CK(cudaEventRecord(e0, s)); }
    double end_ms()
    {
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        CK(cudaGetLastError());
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        return ms;
    }
};

// A stream and its events, taken from a pool and handed back when the request is done:
// creating them per request spends host time inside the stage that the replay times.
// One that saw an error is destroyed rather than reused.
static std::mutex g_timed_mu;
static std::vector<std::unique_ptr<Timed>> g_timed_free;

struct PooledTimed {
    std::unique_ptr<Timed> t;
    bool clean = false;
    PooledTimed()
    {
        {
            std::lock_guard<std::mutex> l(g_timed_mu);
            if (!g_timed_free.empty()) {
                t = std::move(g_timed_free.back());
                g_timed_free.pop_back();
            }
        }
        if (!t) t.reset(new Timed());
    }
    ~PooledTimed()
    {
        if (!clean) return;
        std::lock_guard<std::mutex> l(g_timed_mu);
        g_timed_free.push_back(std::move(t));
    }
    cudaStream_t stream() const { return t->s; }
    void begin() { t->begin(); }
    double end_ms()
    {
        double ms = t->end_ms();
        clean = true;
        return ms;
    }
};

static void cmd_copy(unsigned long long id, const std::string& dir, size_t bytes, bool pinned)
{
    bool up = dir == "h2d";
    if (!up && dir != "d2h") {
        fail(id, "copy: direction must be h2d or d2h");
        return;
    }
    staging();
    PooledTimed t;
    t.begin();
    for (size_t off = 0; off < bytes; off += CHUNK) {
        size_t n = std::min(CHUNK, bytes - off);
        if (up)
            CK(cudaMemcpyAsync(g_stage.dev_in, pinned ? g_stage.pinned_src : g_stage.pageable_src,
                               n, cudaMemcpyHostToDevice, t.stream()));
        else
            CK(cudaMemcpyAsync(pinned ? g_stage.pinned_dst : g_stage.pageable_dst,
                               g_stage.dev_out, n, cudaMemcpyDeviceToHost, t.stream()));
    }
    double ms = t.end_ms();
    reply(id, "\"ok\":true,\"gpu_ms\":" + std::to_string(ms));
}

// --------------------------------------------------------------- VRAM ----

static std::mutex g_alloc_mu;
static std::map<unsigned long long, void*> g_allocs;
static unsigned long long g_next_handle = 1;

static void cmd_alloc(unsigned long long id, size_t bytes)
{
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    void* p = nullptr;
    cudaError_t e = cudaMallocAsync(&p, std::max(bytes, (size_t)1), s);
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    (void)cudaStreamDestroy(s);
    if (e != cudaSuccess)
        throw std::runtime_error(std::string("cudaMallocAsync of ") + std::to_string(bytes) +
                                 " bytes: " + cudaGetErrorString(e));
    unsigned long long h;
    {
        std::lock_guard<std::mutex> l(g_alloc_mu);
        h = g_next_handle++;
        g_allocs[h] = p;
    }
    reply(id, "\"ok\":true,\"handle\":" + std::to_string(h));
}

static void cmd_free(unsigned long long id, unsigned long long h)
{
    void* p = nullptr;
    {
        std::lock_guard<std::mutex> l(g_alloc_mu);
        auto it = g_allocs.find(h);
        if (it == g_allocs.end()) {
            fail(id, "free: unknown handle " + std::to_string(h));
            return;
        }
        p = it->second;
        g_allocs.erase(it);
    }
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaError_t e = cudaFreeAsync(p, s);
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    (void)cudaStreamDestroy(s);
    if (e != cudaSuccess) throw std::runtime_error(std::string("cudaFreeAsync: ") + cudaGetErrorString(e));
    reply(id, "\"ok\":true");
}

// ---------------------------------------------------------------- NTT ----

static std::mutex g_ntt_mu;
static std::map<uint32_t, fr_t*> g_ntt_buf;

static fr_t* ntt_buffer(uint32_t lg)
{
    std::lock_guard<std::mutex> l(g_ntt_mu);
    auto it = g_ntt_buf.find(lg);
    if (it != g_ntt_buf.end()) return it->second;
    size_t n = (size_t)1 << lg;
    fr_t* d = nullptr;
    CK(cudaMalloc(&d, n * sizeof(fr_t)));
    // Canonical field elements: every limb 0x0101..01 is below the modulus.
    CK(cudaMemset(d, 1, n * sizeof(fr_t)));
    CK(cudaDeviceSynchronize());
    g_ntt_buf[lg] = d;
    return d;
}

// One unit: inverse NR then forward coset RN (supraseal's H phase, per input vector).
static void ntt_unit(stream_t& s, fr_t* d, uint32_t lg)
{
    NTT::Base_dev_ptr(s, d, lg, NTT::InputOutputOrder::NR, NTT::Direction::inverse,
                      NTT::Type::standard);
    NTT::Base_dev_ptr(s, d, lg, NTT::InputOutputOrder::RN, NTT::Direction::forward,
                      NTT::Type::coset);
}

static double ntt_run(uint32_t lg, unsigned long long reps)
{
    fr_t* d = ntt_buffer(lg);
    stream_t s(0);
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventRecord(e0, s));
    for (unsigned long long r = 0; r < reps; r++) ntt_unit(s, d, lg);
    CK(cudaEventRecord(e1, s));
    CK(cudaEventSynchronize(e1));
    CK(cudaGetLastError());
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    (void)cudaEventDestroy(e0);
    (void)cudaEventDestroy(e1);
    return ms;
}

// ---------------------------------------------------------------- MSM ----

typedef msm_t<bucket_t, point_t, affine_t, scalar_t> msm_type;

struct MsmSet {
    affine_t* points = nullptr;  // pinned host
    scalar_t* scalars = nullptr; // pinned host
    std::unique_ptr<msm_type> msm;
    // An MSM given its points at each call (sized for 2^lg, no points on the device),
    // and a pageable copy of the points; both made on first use.
    std::unique_ptr<msm_type> host_points_msm;
    affine_t* pageable_points = nullptr;
};
static std::mutex g_msm_mu;  // sppark's MSM shares the GPU's streams: one at a time
static std::map<uint32_t, MsmSet> g_msm;

// Host points: `distinct` multiples k*G (k = 1..distinct), tiled to fill n.
static void make_points(affine_t* out, size_t n)
{
    size_t distinct = std::min(n, (size_t)1 << 20);
    size_t nthr = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
    bp1a* dst = reinterpret_cast<bp1a*>(out);
    std::vector<std::thread> th;
    for (size_t t = 0; t < nthr; t++) {
        th.emplace_back([=]() {
            size_t lo = distinct * t / nthr, hi = distinct * (t + 1) / nthr;
            if (lo >= hi) return;
            const size_t CH = 1024;
            std::vector<bp1> jac(CH);
            std::vector<const bp1*> ptrs(CH);
            bp1 g = *blst_p1_generator(), acc;
            byte sc[32] = {0};
            uint64_t k = lo + 1;
            memcpy(sc, &k, 8);
            blst_p1_mult(&acc, &g, sc, 64);
            for (size_t i = lo; i < hi; i += CH) {
                size_t m = std::min(CH, hi - i);
                for (size_t j = 0; j < m; j++) {
                    jac[j] = acc;
                    ptrs[j] = &jac[j];
                    blst_p1_add_or_double(&acc, &acc, &g);
                }
                blst_p1s_to_affine(dst + i, ptrs.data(), m);
            }
        });
    }
    for (auto& x : th) x.join();
    for (size_t off = distinct; off < n; off += distinct)
        memcpy(dst + off, dst, std::min(distinct, n - off) * sizeof(affine_t));
}

static void fill_scalars(scalar_t* p, size_t n)
{
    uint64_t* q = reinterpret_cast<uint64_t*>(p);
    std::mt19937_64 rng(4242);
    for (size_t i = 0; i < n; i++) {
        for (int j = 0; j < 4; j++) q[4 * i + j] = rng();
        q[4 * i + 3] &= 0x3fffffffffffffffULL;
    }
}

// Caller holds g_msm_mu.
static MsmSet& msm_set(uint32_t lg)
{
    auto it = g_msm.find(lg);
    if (it != g_msm.end()) return it->second;
    size_t n = (size_t)1 << lg;
    MsmSet m;
    CK(cudaMallocHost(&m.points, n * sizeof(affine_t)));
    CK(cudaMallocHost(&m.scalars, n * sizeof(scalar_t)));
    make_points(m.points, n);
    fill_scalars(m.scalars, n);
    m.msm.reset(new msm_type(m.points, n));
    return g_msm.emplace(lg, std::move(m)).first->second;
}

static double msm_run(uint32_t lg, unsigned long long reps)
{
    std::lock_guard<std::mutex> l(g_msm_mu);
    MsmSet& m = msm_set(lg);
    size_t n = (size_t)1 << lg;
    point_t out;
    auto t0 = clk::now();
    for (unsigned long long r = 0; r < reps; r++) {
        RustError e = m.msm->invoke(out, (const affine_t*)nullptr, n, m.scalars, false);
        if (e.code != cudaSuccess)
            throw std::runtime_error("msm invoke failed: " +
                                     std::string(cudaGetErrorString((cudaError_t)e.code)));
    }
    return ms_since(t0);
}

// reps MSMs whose points sppark uploads from host memory batch by batch (double-
// buffered beside the compute), pinned or pageable.
static double msm_host_run(uint32_t lg, unsigned long long reps, bool pinned)
{
    std::lock_guard<std::mutex> l(g_msm_mu);
    MsmSet& m = msm_set(lg);
    size_t n = (size_t)1 << lg;
    if (!m.host_points_msm) m.host_points_msm.reset(new msm_type(nullptr, n));
    if (!pinned && !m.pageable_points) {
        void* p = aligned_alloc(4096, n * sizeof(affine_t));
        if (!p) throw std::runtime_error("pageable MSM points: host allocation failed");
        memcpy(p, m.points, n * sizeof(affine_t));
        m.pageable_points = (affine_t*)p;
    }
    const affine_t* points = pinned ? m.points : m.pageable_points;
    point_t out;
    auto t0 = clk::now();
    for (unsigned long long r = 0; r < reps; r++) {
        RustError e = m.host_points_msm->invoke(out, points, n, m.scalars, false);
        if (e.code != cudaSuccess)
            throw std::runtime_error("msm (host points) invoke failed: " +
                                     std::string(cudaGetErrorString((cudaError_t)e.code)));
    }
    return ms_since(t0);
}

static void cmd_prepare(unsigned long long id, const std::string& kind, uint32_t lg,
                        bool pinned)
{
    double ms = 0;
    if (kind == "ntt") {
        ntt_run(lg, 1);  // twiddles, modules, buffer
        std::vector<double> v;
        for (int i = 0; i < 3; i++) v.push_back(ntt_run(lg, 1));
        std::sort(v.begin(), v.end());
        ms = v[1];
    } else if (kind == "msm") {
        msm_run(lg, 1);  // points, upload, warm-up
        std::vector<double> v;
        for (int i = 0; i < 3; i++) v.push_back(msm_run(lg, 1));
        std::sort(v.begin(), v.end());
        ms = v[1];
    } else if (kind == "msm_host") {
        msm_host_run(lg, 1, pinned);  // points, buckets, pageable copy, warm-up
        std::vector<double> v;
        for (int i = 0; i < 3; i++) v.push_back(msm_host_run(lg, 1, pinned));
        std::sort(v.begin(), v.end());
        ms = v[1];
    } else {
        fail(id, "prepare: kind must be ntt, msm or msm_host");
        return;
    }
    reply(id, "\"ok\":true,\"kind\":\"" + kind + "\",\"lg\":" + std::to_string(lg) +
                  ",\"ms\":" + std::to_string(ms));
}

// --------------------------------------------------------------- spin ----

__global__ void spin_kernel(unsigned long long ns)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
}

static void cmd_spin(unsigned long long id, unsigned long long us)
{
    PooledTimed t;
    t.begin();
    // Split long spins so that no single launch runs for minutes.
    const unsigned long long step = 100000;  // 100 ms
    for (unsigned long long done = 0; done < us; done += step) {
        unsigned long long d = std::min(step, us - done);
        spin_kernel<<<1, 32, 0, t.stream()>>>(d * 1000ULL);
    }
    double ms = t.end_ms();
    reply(id, "\"ok\":true,\"gpu_ms\":" + std::to_string(ms));
}

// --------------------------------------------------------------- NVML ----

typedef int (*nvml_init_t)();
typedef int (*nvml_handle_t)(unsigned int, void**);
struct nvml_util { unsigned int gpu, memory; };
typedef int (*nvml_util_t)(void*, nvml_util*);
typedef int (*nvml_power_t)(void*, unsigned int*);

struct Nvml {
    bool tried = false;
    std::string error;
    void* dev = nullptr;
    nvml_util_t util = nullptr;
    nvml_power_t power = nullptr;
    std::thread th;
    std::atomic<bool> stop{false};
    std::mutex mu;
    std::vector<std::array<double, 3>> samples;
    bool running = false;
};
static Nvml g_nvml;

static bool nvml_load()
{
    if (g_nvml.tried) return g_nvml.error.empty();
    g_nvml.tried = true;
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (!lib) {
        g_nvml.error = std::string("dlopen libnvidia-ml.so.1: ") + dlerror();
        return false;
    }
    auto init = (nvml_init_t)dlsym(lib, "nvmlInit_v2");
    auto handle = (nvml_handle_t)dlsym(lib, "nvmlDeviceGetHandleByIndex_v2");
    g_nvml.util = (nvml_util_t)dlsym(lib, "nvmlDeviceGetUtilizationRates");
    g_nvml.power = (nvml_power_t)dlsym(lib, "nvmlDeviceGetPowerUsage");
    if (!init || !handle || !g_nvml.util || !g_nvml.power) {
        g_nvml.error = "libnvidia-ml.so.1 lacks the expected symbols";
        return false;
    }
    int r = init();
    if (r != 0) {
        g_nvml.error = "nvmlInit_v2 failed with code " + std::to_string(r);
        return false;
    }
    // NVML numbers devices by PCI order, CUDA by its own order and CUDA_VISIBLE_DEVICES
    // (bwsim starts one harness per GPU with that set): find the NVML device of CUDA
    // device 0 by its PCI bus id, falling back to NVML index 0.
    typedef int (*nvml_by_pci_t)(const char*, void**);
    auto by_pci = (nvml_by_pci_t)dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
    char bus[32] = {0};
    if (by_pci && cudaDeviceGetPCIBusId(bus, sizeof bus, 0) == cudaSuccess &&
        by_pci(bus, &g_nvml.dev) == 0)
        return true;
    r = handle(0, &g_nvml.dev);
    if (r != 0) {
        g_nvml.error = "nvmlDeviceGetHandleByIndex_v2(0) failed with code " + std::to_string(r);
        return false;
    }
    return true;
}

static void cmd_nvml_start(unsigned long long id, unsigned int period_ms)
{
    if (!nvml_load()) {
        fail(id, "NVML not available: " + g_nvml.error);
        return;
    }
    if (g_nvml.running) {
        fail(id, "nvml_start: already sampling");
        return;
    }
    {
        std::lock_guard<std::mutex> l(g_nvml.mu);
        g_nvml.samples.clear();
    }
    g_nvml.stop = false;
    g_nvml.running = true;
    g_nvml.th = std::thread([period_ms]() {
        auto t0 = clk::now();
        while (!g_nvml.stop) {
            nvml_util u{0, 0};
            unsigned int mw = 0;
            int a = g_nvml.util(g_nvml.dev, &u);
            int b = g_nvml.power(g_nvml.dev, &mw);
            if (a == 0) {
                std::lock_guard<std::mutex> l(g_nvml.mu);
                g_nvml.samples.push_back({ms_since(t0) / 1e3, (double)u.gpu,
                                          b == 0 ? mw / 1000.0 : -1.0});
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(period_ms));
        }
    });
    reply(id, "\"ok\":true");
}

static void cmd_nvml_stop(unsigned long long id)
{
    if (!g_nvml.running) {
        fail(id, "nvml_stop: not sampling");
        return;
    }
    g_nvml.stop = true;
    g_nvml.th.join();
    g_nvml.running = false;
    std::ostringstream out;
    out << "\"ok\":true,\"samples\":[";
    std::lock_guard<std::mutex> l(g_nvml.mu);
    for (size_t i = 0; i < g_nvml.samples.size(); i++) {
        const auto& s = g_nvml.samples[i];
        out << (i ? "," : "") << "[" << s[0] << "," << s[1] << "," << s[2] << "]";
    }
    out << "]";
    reply(id, out.str());
}

// --------------------------------------------------------------- info ----

// PCI bus id of CUDA device 0 (the one GPU this harness sees when bwsim starts one
// harness per GPU), so a multi-GPU replay can tell its harnesses apart.
static std::string pci_bus()
{
    char bus[32] = {0};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, 0) != cudaSuccess) return "unknown";
    return bus;
}

static void cmd_info(unsigned long long id)
{
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    size_t free_b = 0, total_b = 0;
    CK(cudaMemGetInfo(&free_b, &total_b));
    int drv = 0;
    CK(cudaDriverGetVersion(&drv));
    bool nvml = nvml_load();
    std::ostringstream out;
    out << "\"ok\":true,\"gpu\":\"" << p.name << "\",\"cc\":\"" << p.major << "." << p.minor
        << "\",\"vram_bytes\":" << total_b << ",\"free_bytes\":" << free_b
        << ",\"driver_api\":" << drv << ",\"pci_bus\":\"" << pci_bus() << "\"" << ",\"nvml\":" << (nvml ? "true" : "false");
    reply(id, out.str());
}

// --------------------------------------------------------------- main ----

static std::atomic<int> g_in_flight{0};

static void dispatch(unsigned long long id, std::string cmd, std::string rest)
{
    std::istringstream in(rest);
    try {
        CK(cudaSetDevice(0));
        if (cmd == "info") {
            cmd_info(id);
        } else if (cmd == "alloc") {
            size_t b = 0;
            if (!(in >> b)) return fail(id, "alloc: expected <bytes>");
            cmd_alloc(id, b);
        } else if (cmd == "free") {
            unsigned long long h = 0;
            if (!(in >> h)) return fail(id, "free: expected <handle>");
            cmd_free(id, h);
        } else if (cmd == "copy") {
            std::string dir;
            size_t bytes = 0;
            int pinned = 1;
            if (!(in >> dir >> bytes >> pinned))
                return fail(id, "copy: expected <h2d|d2h> <bytes> <pinned 0|1>");
            cmd_copy(id, dir, bytes, pinned != 0);
        } else if (cmd == "prepare") {
            std::string kind;
            uint32_t lg = 0;
            int pinned = 1;
            if (!(in >> kind >> lg) || lg < 10 || lg > 28)
                return fail(id, "prepare: expected <ntt|msm|msm_host> <lg 10..28>");
            if (kind == "msm_host" && !(in >> pinned))
                return fail(id, "prepare msm_host: expected <lg 10..28> <pinned 0|1>");
            cmd_prepare(id, kind, lg, pinned != 0);
        } else if (cmd == "ntt" || cmd == "msm") {
            uint32_t lg = 0;
            unsigned long long reps = 0;
            if (!(in >> lg >> reps) || lg < 10 || lg > 28 || reps < 1)
                return fail(id, cmd + ": expected <lg 10..28> <reps >= 1>");
            double ms = cmd == "ntt" ? ntt_run(lg, reps) : msm_run(lg, reps);
            reply(id, "\"ok\":true,\"gpu_ms\":" + std::to_string(ms));
        } else if (cmd == "msm_host") {
            uint32_t lg = 0;
            unsigned long long reps = 0;
            int pinned = 1;
            if (!(in >> lg >> reps >> pinned) || lg < 10 || lg > 28 || reps < 1)
                return fail(id, "msm_host: expected <lg 10..28> <reps >= 1> <pinned 0|1>");
            double ms = msm_host_run(lg, reps, pinned != 0);
            reply(id, "\"ok\":true,\"gpu_ms\":" + std::to_string(ms));
        } else if (cmd == "spin") {
            unsigned long long us = 0;
            if (!(in >> us)) return fail(id, "spin: expected <microseconds>");
            cmd_spin(id, us);
        } else if (cmd == "nvml_start") {
            unsigned int period = 0;
            if (!(in >> period) || period < 1) return fail(id, "nvml_start: expected <period_ms >= 1>");
            cmd_nvml_start(id, period);
        } else if (cmd == "nvml_stop") {
            cmd_nvml_stop(id);
        } else {
            fail(id, "unknown command: " + cmd);
        }
    } catch (const std::exception& ex) {
        (void)cudaGetLastError();
        fail(id, ex.what());
    }
}

int main()
{
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0) {
        printf("{\"ok\":false,\"no_gpu\":true,\"error\":\"%s\"}\n",
               e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device");
        fflush(stdout);
        return 3;
    }
    if (const char* path = getenv("BWSIM_GPU_TRACE")) {
        g_trace = fopen(path, "a");
        if (!g_trace)
            fprintf(stderr, "BWSIM_GPU_TRACE=%s: cannot open it for appending (%s); no trace written\n",
                    path, strerror(errno));
    }
    printf("{\"ok\":true,\"ready\":true,\"devices\":%d}\n", ndev);
    fflush(stdout);
    std::string line;
    while (std::getline(std::cin, line)) {
        std::istringstream in(line);
        unsigned long long id = 0;
        std::string cmd;
        if (!(in >> id >> cmd)) continue;
        if (cmd == "quit") break;
        std::string rest;
        std::getline(in, rest);
        auto read_at = clk::now();
        // nvml_start/stop touch shared sampler state: run them in order, here.
        if (cmd == "nvml_start" || cmd == "nvml_stop") {
            t_read = read_at;
            t_cmd = cmd;
            dispatch(id, cmd, rest);
            continue;
        }
        g_in_flight++;
        std::thread([id, cmd, rest, read_at]() {
            t_read = read_at;
            t_cmd = cmd + rest;
            dispatch(id, cmd, rest);
            g_in_flight--;
        }).detach();
    }
    auto t0 = clk::now();
    while (g_in_flight > 0 && ms_since(t0) < 60000)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (g_nvml.running) {
        g_nvml.stop = true;
        g_nvml.th.join();
    }
    // Exit without tearing CUDA down under threads that may still run.
    fflush(stdout);
    if (g_trace) fflush(g_trace);
    _exit(0);
}
