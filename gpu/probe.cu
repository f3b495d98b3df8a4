// bwsim GPU probe harness: times the real sppark kernels (BLS12-381 NTT, G1 Pippenger
// MSM) and PCIe copies, and answers `bwsim calibrate` / `bwsim validate` over a line
// protocol: one command per stdin line, JSON lines on stdout.
//
// Commands (fields separated by spaces):
//   info                              -> {"ok":true,"gpu":...,"driver":...,...}
//   verify                            -> NTT round trips + MSM vs blst (small sizes)
//   ntt <lg> <reps>                   -> median ms of each H-phase NTT variant, and the
//                                        CPUs this process kept busy while they ran
//   msm <lg> <reps>                   -> median ms of a G1 MSM, points on the device, and
//                                        the CPUs this process kept busy while it ran
//   pcie <h2d|d2h|both> <pinned 0|1> <seconds> <mib>
//                                     -> {"event":"begin"} then achieved GB/s
//   pipe <lg> <pinned 0|1> <seconds>  -> {"event":"begin"} then an H-phase-like loop:
//                                        upload 2^lg scalars, inverse NR NTT, forward
//                                        coset RN NTT, download; per-iteration timings
//   quit
// Every reply is one JSON object on one line; failures are {"ok":false,"error":"..."}.
// Exit code 3 at start-up: no usable CUDA device (the caller skips GPU probes).
//
// Build: see gpu/build.sh (nvcc 13, -DFEATURE_BLS12_381 -D__ADX__, sppark + blst).

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

// blst's public header clashes with the internal vect.h that sppark's host field types
// pull in (both define limb_t), so declare the few blst entry points used here.
struct bp1 { uint64_t x[6], y[6], z[6]; };
struct bp1a { uint64_t x[6], y[6]; };
typedef unsigned char byte;
extern "C" {
const bp1* blst_p1_generator();
void blst_p1_mult(bp1* out, const bp1* p, const byte* scalar, size_t nbits);
void blst_p1_add_or_double(bp1* out, const bp1* a, const bp1* b);
void blst_p1s_to_affine(bp1a dst[], const bp1* const points[], size_t npoints);
size_t blst_p1s_mult_pippenger_scratch_sizeof(size_t npoints);
void blst_p1s_mult_pippenger(bp1* ret, const bp1a* const points[], size_t npoints,
                             const byte* const scalars[], size_t nbits, uint64_t* scratch);
bool blst_p1_is_equal(const bp1* a, const bp1* b);
}

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>

using clk = std::chrono::steady_clock;

static double secs_since(clk::time_point t0)
{
    return std::chrono::duration<double>(clk::now() - t0).count();
}

static void fail(const std::string& what)
{
    std::string s = what;
    for (auto& c : s)
        if (c == '"' || c == '\\' || c == '\n') c = '\'';
    printf("{\"ok\":false,\"error\":\"%s\"}\n", s.c_str());
    fflush(stdout);
}

#define CK(call)                                                              \
    do {                                                                      \
        cudaError_t e_ = (call);                                              \
        if (e_ != cudaSuccess)                                                \
            throw std::runtime_error(std::string(#call) + ": " +              \
                                     cudaGetErrorString(e_));                 \
    } while (0)

// CPU seconds this process (all its threads) has used: what a GPU operation's host side
// (the waiting thread, sppark's host pool) takes of the CPUs while it runs.
static double cpu_secs()
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec +
           (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

static double median(std::vector<double> v)
{
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Random canonical scalars / field elements: 254 random bits (< r), raw limbs.
static void fill_random(void* dst, size_t n_elems, uint64_t seed)
{
    uint64_t* p = (uint64_t*)dst;
    size_t nthr = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
    std::vector<std::thread> th;
    for (size_t t = 0; t < nthr; t++) {
        th.emplace_back([=]() {
            std::mt19937_64 rng(seed * 7919 + t);
            size_t lo = n_elems * t / nthr, hi = n_elems * (t + 1) / nthr;
            for (size_t i = lo; i < hi; i++) {
                for (int j = 0; j < 4; j++) p[4 * i + j] = rng();
                p[4 * i + 3] &= 0x3fffffffffffffffULL;
            }
        });
    }
    for (auto& x : th) x.join();
}

// ------------------------------------------------------------------ info ----

static void cmd_info()
{
    int dev = 0, drv = 0, rt = 0;
    CK(cudaGetDevice(&dev));
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, dev));
    CK(cudaDriverGetVersion(&drv));
    CK(cudaRuntimeGetVersion(&rt));
    size_t free_b = 0, total_b = 0;
    CK(cudaMemGetInfo(&free_b, &total_b));
    printf("{\"ok\":true,\"gpu\":\"%s\",\"cc\":\"%d.%d\",\"sms\":%d,\"vram_bytes\":%zu,"
           "\"free_bytes\":%zu,\"driver_api\":%d,\"runtime_api\":%d,\"pci_bus\":%d,"
           "\"l2_bytes\":%d}\n",
           p.name, p.major, p.minor, p.multiProcessorCount, total_b, free_b, drv, rt,
           p.pciBusID, p.l2CacheSize);
    fflush(stdout);
}

// ------------------------------------------------------------------- NTT ----

struct NttVariant {
    const char* name;
    NTT::InputOutputOrder order;
    NTT::Direction dir;
    NTT::Type type;
};

// The variants supraseal-c2's H phase runs (groth16_ntt_h.cu): per input vector an
// inverse NR then a forward coset RN; at the end one inverse coset NN. Forward NR is
// the common reference point.
static const NttVariant NTT_VARIANTS[] = {
    {"fwd_nr", NTT::InputOutputOrder::NR, NTT::Direction::forward, NTT::Type::standard},
    {"inv_nr", NTT::InputOutputOrder::NR, NTT::Direction::inverse, NTT::Type::standard},
    {"fwd_coset_rn", NTT::InputOutputOrder::RN, NTT::Direction::forward, NTT::Type::coset},
    {"inv_coset_nn", NTT::InputOutputOrder::NN, NTT::Direction::inverse, NTT::Type::coset},
};

// Round trip: x -> fwd -> inv must give x back. Returns the number of mismatches.
static size_t ntt_round_trip(stream_t& s, fr_t* d, const std::vector<fr_t>& h, uint32_t lg,
                             NTT::InputOutputOrder fo, NTT::InputOutputOrder io,
                             NTT::Type type)
{
    size_t n = (size_t)1 << lg;
    CK(cudaMemcpyAsync(d, h.data(), n * sizeof(fr_t), cudaMemcpyHostToDevice, s));
    NTT::Base_dev_ptr(s, d, lg, fo, NTT::Direction::forward, type);
    NTT::Base_dev_ptr(s, d, lg, io, NTT::Direction::inverse, type);
    std::vector<fr_t> back(n);
    CK(cudaMemcpyAsync(back.data(), d, n * sizeof(fr_t), cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    CK(cudaGetLastError());
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        fr_t diff = back[i] - h[i];
        if (!diff.is_zero()) bad++;
    }
    return bad;
}

static size_t ntt_verify(uint32_t lg)
{
    size_t n = (size_t)1 << lg;
    std::vector<fr_t> h(n);
    fill_random(h.data(), n, 1000 + lg);
    stream_t s(0);
    fr_t* d = nullptr;
    CK(cudaMalloc(&d, n * sizeof(fr_t)));
    size_t bad = 0;
    // NR forward then RN inverse (standard), RN forward coset then NR inverse coset,
    // NN both ways coset.
    bad += ntt_round_trip(s, d, h, lg, NTT::InputOutputOrder::NR,
                          NTT::InputOutputOrder::RN, NTT::Type::standard);
    bad += ntt_round_trip(s, d, h, lg, NTT::InputOutputOrder::RN,
                          NTT::InputOutputOrder::NR, NTT::Type::coset);
    bad += ntt_round_trip(s, d, h, lg, NTT::InputOutputOrder::NN,
                          NTT::InputOutputOrder::NN, NTT::Type::coset);
    CK(cudaFree(d));
    return bad;
}

static void cmd_ntt(uint32_t lg, int reps)
{
    size_t n = (size_t)1 << lg;
    size_t bad = ntt_verify(std::min(lg, 22u));
    if (bad) {
        fail("NTT round trip failed at lg " + std::to_string(std::min(lg, 22u)) + ": " +
             std::to_string(bad) + " mismatches");
        return;
    }
    stream_t s(0);
    fr_t* d = nullptr;
    CK(cudaMalloc(&d, n * sizeof(fr_t)));
    {
        std::vector<fr_t> h(std::min(n, (size_t)1 << 22));
        fill_random(h.data(), h.size(), 7 + lg);
        for (size_t off = 0; off < n; off += h.size())
            CK(cudaMemcpy(d + off, h.data(), h.size() * sizeof(fr_t),
                          cudaMemcpyHostToDevice));
    }
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::ostringstream out;
    out << "{\"ok\":true,\"lg\":" << lg << ",\"verified_lg\":" << std::min(lg, 22u)
        << ",\"ms\":{";
    bool first = true;
    double wall_s = 0, cpu_s = 0;
    for (const auto& v : NTT_VARIANTS) {
        // warm-up (first use compiles twiddles / loads modules)
        NTT::Base_dev_ptr(s, d, lg, v.order, v.dir, v.type);
        CK(cudaStreamSynchronize(s));
        std::vector<double> ms;
        double c0 = cpu_secs();
        auto w0 = clk::now();
        for (int r = 0; r < reps; r++) {
            CK(cudaEventRecord(e0, s));
            NTT::Base_dev_ptr(s, d, lg, v.order, v.dir, v.type);
            CK(cudaEventRecord(e1, s));
            CK(cudaEventSynchronize(e1));
            float t = 0;
            CK(cudaEventElapsedTime(&t, e0, e1));
            ms.push_back(t);
        }
        wall_s += secs_since(w0);
        cpu_s += cpu_secs() - c0;
        CK(cudaGetLastError());
        out << (first ? "" : ",") << "\"" << v.name << "\":" << median(ms);
        first = false;
    }
    out << "},\"cpu_threads\":" << (wall_s > 0 ? cpu_s / wall_s : 0.0) << "}";
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    CK(cudaFree(d));
    printf("%s\n", out.str().c_str());
    fflush(stdout);
}

// ------------------------------------------------------------------- MSM ----

// Host points: `distinct` points k*G (k = 1..distinct), tiled to fill `n`.
static affine_t* g_points = nullptr;
static size_t g_points_n = 0;

static void make_points(size_t n)
{
    if (g_points_n >= n) return;
    if (g_points) CK(cudaFreeHost(g_points));
    g_points = nullptr;
    g_points_n = 0;
    CK(cudaMallocHost(&g_points, n * sizeof(affine_t)));
    size_t distinct = std::min(n, (size_t)1 << 20);
    size_t nthr = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
    bp1a* dst = reinterpret_cast<bp1a*>(g_points);
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
    g_points_n = n;
}

static bool msm_verify(size_t n)
{
    make_points(n);
    std::vector<scalar_t> sc(n);
    fill_random(sc.data(), n, 4242);
    point_t out;
    RustError e = mult_pippenger<bucket_t>(&out, g_points, n, sc.data(), false);
    if (e.code != cudaSuccess)
        throw std::runtime_error("mult_pippenger failed: " +
                                 std::string(cudaGetErrorString((cudaError_t)e.code)));
    bp1 ref;
    const bp1a* pts[2] = {reinterpret_cast<const bp1a*>(g_points),
                                    nullptr};
    const byte* scs[2] = {reinterpret_cast<const byte*>(sc.data()), nullptr};
    std::vector<uint64_t> scratch(blst_p1s_mult_pippenger_scratch_sizeof(n) / 8 +
                                1);
    blst_p1s_mult_pippenger(&ref, pts, n, scs, 255, scratch.data());
    return blst_p1_is_equal(reinterpret_cast<const bp1*>(&out), &ref);
}

static void cmd_msm(uint32_t lg, int reps)
{
    size_t n = (size_t)1 << lg;
    make_points(n);
    std::vector<scalar_t> sc;
    scalar_t* h_sc = nullptr;
    CK(cudaMallocHost(&h_sc, n * sizeof(scalar_t)));
    fill_random(h_sc, n, 99 + lg);
    scalar_t* d_sc = nullptr;
    CK(cudaMalloc(&d_sc, n * sizeof(scalar_t)));
    CK(cudaMemcpy(d_sc, h_sc, n * sizeof(scalar_t), cudaMemcpyHostToDevice));
    std::vector<double> dev_ms, host_ms;
    double cpu_ms = 0;
    {
        msm_t<bucket_t, point_t, affine_t, scalar_t> msm{g_points, n};
        point_t out;
        // warm-up
        RustError e = msm.invoke(out, (const affine_t*)nullptr, n, h_sc, false);
        if (e.code != cudaSuccess) throw std::runtime_error("msm invoke failed");
        for (int r = 0; r < reps; r++) {
            CK(cudaDeviceSynchronize());
            double c0 = cpu_secs();
            auto t0 = clk::now();
            e = msm.invoke(out, (const affine_t*)nullptr, n, h_sc, false);
            CK(cudaDeviceSynchronize());
            host_ms.push_back(secs_since(t0) * 1e3);
            cpu_ms += (cpu_secs() - c0) * 1e3;
            if (e.code != cudaSuccess) throw std::runtime_error("msm invoke failed");
        }
    }
    CK(cudaFree(d_sc));
    CK(cudaFreeHost(h_sc));
    printf("{\"ok\":true,\"lg\":%u,\"points\":\"device\",\"scalars\":\"pinned host\","
           "\"distinct_points\":%zu,\"ms\":%.4f,\"ms_min\":%.4f,\"cpu_threads\":%.4f}\n",
           lg, std::min(n, (size_t)1 << 20), median(host_ms),
           *std::min_element(host_ms.begin(), host_ms.end()),
           cpu_ms / std::max(1e-9, std::accumulate(host_ms.begin(), host_ms.end(), 0.0)));
    fflush(stdout);
}

static void cmd_verify()
{
    std::ostringstream out;
    out << "{\"ok\":true,\"ntt\":[";
    bool all = true, first = true;
    for (uint32_t lg : {10u, 16u, 20u}) {
        size_t bad = ntt_verify(lg);
        all = all && bad == 0;
        out << (first ? "" : ",") << "{\"lg\":" << lg << ",\"mismatches\":" << bad << "}";
        first = false;
    }
    out << "],\"msm\":[";
    first = true;
    for (size_t n : {(size_t)1000, (size_t)1 << 14}) {
        bool ok = msm_verify(n);
        all = all && ok;
        out << (first ? "" : ",") << "{\"n\":" << n << ",\"matches_blst\":"
            << (ok ? "true" : "false") << "}";
        first = false;
    }
    out << "],\"all_ok\":" << (all ? "true" : "false") << "}";
    printf("%s\n", out.str().c_str());
    fflush(stdout);
}

// ------------------------------------------------------------------ PCIe ----

struct HostBuf {
    void* p = nullptr;
    size_t n = 0;
    bool pinned = false;
    HostBuf(size_t bytes, bool pin) : n(bytes), pinned(pin)
    {
        if (pin) {
            CK(cudaMallocHost(&p, bytes));
        } else {
            p = aligned_alloc(4096, bytes);
            if (!p) throw std::runtime_error("host allocation failed");
        }
        // First touch by this thread, with distinct words on every page, as a pipeline's
        // data: pages of one repeated byte are what a hypervisor can merge onto shared
        // 4 KiB host pages. (On the H200 VM this did not change the measured rates:
        // 1 GiB pageable uploads ran 5.1-7.3 GB/s over a memset buffer, 6.1-6.4 over
        // distinct words.)
        uint64_t* w = (uint64_t*)p;
        for (size_t i = 0; i < bytes / 8; i++) w[i] = (i + 1) * 0x9E3779B97F4A7C15ULL;
    }
    ~HostBuf()
    {
        if (pinned) (void)cudaFreeHost(p);
        else free(p);
    }
};

// Copies in `dir` for `seconds`; each direction runs its own loop on its own stream.
static void cmd_pcie(const std::string& dir, bool pinned, double seconds, size_t mib)
{
    size_t bytes = mib << 20;
    bool up = dir == "h2d" || dir == "both", down = dir == "d2h" || dir == "both";
    if (!up && !down) {
        fail("pcie: direction must be h2d, d2h or both");
        return;
    }
    std::unique_ptr<HostBuf> hu, hd;
    void *du = nullptr, *dd = nullptr;
    if (up) {
        hu.reset(new HostBuf(bytes, pinned));
        CK(cudaMalloc(&du, bytes));
    }
    if (down) {
        hd.reset(new HostBuf(bytes, pinned));
        CK(cudaMalloc(&dd, bytes));
        CK(cudaMemset(dd, 3, bytes));
    }
    // warm-up copy
    if (up) CK(cudaMemcpy(du, hu->p, bytes, cudaMemcpyHostToDevice));
    if (down) CK(cudaMemcpy(hd->p, dd, bytes, cudaMemcpyDeviceToHost));
    printf("{\"event\":\"begin\"}\n");
    fflush(stdout);
    double up_bytes = 0, down_bytes = 0, up_s = 0, down_s = 0;
    std::string err;
    auto loop = [&](bool is_up, double& moved, double& took) {
        try {
            cudaStream_t st;
            CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
            auto t0 = clk::now();
            while (secs_since(t0) < seconds) {
                if (is_up)
                    CK(cudaMemcpyAsync(du, hu->p, bytes, cudaMemcpyHostToDevice, st));
                else
                    CK(cudaMemcpyAsync(hd->p, dd, bytes, cudaMemcpyDeviceToHost, st));
                CK(cudaStreamSynchronize(st));
                moved += bytes;
            }
            took = secs_since(t0);
            CK(cudaStreamDestroy(st));
        } catch (const std::exception& e) {
            err = e.what();
        }
    };
    std::vector<std::thread> th;
    if (up) th.emplace_back([&]() { loop(true, up_bytes, up_s); });
    if (down) th.emplace_back([&]() { loop(false, down_bytes, down_s); });
    for (auto& t : th) t.join();
    if (du) CK(cudaFree(du));
    if (dd) CK(cudaFree(dd));
    if (!err.empty()) {
        fail(err);
        return;
    }
    printf("{\"ok\":true,\"dir\":\"%s\",\"pinned\":%s,\"mib\":%zu,\"h2d_gbps\":%.4f,"
           "\"d2h_gbps\":%.4f,\"h2d_s\":%.4f,\"d2h_s\":%.4f}\n",
           dir.c_str(), pinned ? "true" : "false", mib,
           up_s > 0 ? up_bytes / up_s / 1e9 : 0.0, down_s > 0 ? down_bytes / down_s / 1e9 : 0.0,
           up_s, down_s);
    fflush(stdout);
}

// An H-phase-like pipeline: upload 2^lg scalars from host memory (pinned or pageable),
// inverse NR NTT, forward coset RN NTT, download the result. Runs for `seconds`.
static void cmd_pipe(uint32_t lg, bool pinned, double seconds)
{
    size_t n = (size_t)1 << lg, bytes = n * sizeof(fr_t);
    HostBuf hin(bytes, pinned), hout(bytes, pinned);
    fill_random(hin.p, n, 5);
    fr_t* d = nullptr;
    CK(cudaMalloc(&d, bytes));
    stream_t s(0);
    cudaEvent_t e0, e1, e2, e3;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventCreate(&e2));
    CK(cudaEventCreate(&e3));
    auto one = [&](double* up_ms, double* k_ms, double* down_ms) {
        CK(cudaEventRecord(e0, s));
        CK(cudaMemcpyAsync(d, hin.p, bytes, cudaMemcpyHostToDevice, s));
        CK(cudaEventRecord(e1, s));
        NTT::Base_dev_ptr(s, d, lg, NTT::InputOutputOrder::NR, NTT::Direction::inverse,
                          NTT::Type::standard);
        NTT::Base_dev_ptr(s, d, lg, NTT::InputOutputOrder::RN, NTT::Direction::forward,
                          NTT::Type::coset);
        CK(cudaEventRecord(e2, s));
        CK(cudaMemcpyAsync(hout.p, d, bytes, cudaMemcpyDeviceToHost, s));
        CK(cudaEventRecord(e3, s));
        CK(cudaEventSynchronize(e3));
        float a = 0, b = 0, c = 0;
        CK(cudaEventElapsedTime(&a, e0, e1));
        CK(cudaEventElapsedTime(&b, e1, e2));
        CK(cudaEventElapsedTime(&c, e2, e3));
        *up_ms = a;
        *k_ms = b;
        *down_ms = c;
    };
    double u, k, w;
    one(&u, &k, &w);  // warm-up
    printf("{\"event\":\"begin\"}\n");
    fflush(stdout);
    std::vector<double> ups, ks, downs, iters;
    auto t0 = clk::now();
    while (secs_since(t0) < seconds) {
        auto ti = clk::now();
        one(&u, &k, &w);
        iters.push_back(secs_since(ti) * 1e3);
        ups.push_back(u);
        ks.push_back(k);
        downs.push_back(w);
    }
    double total = secs_since(t0);
    CK(cudaFree(d));
    printf("{\"ok\":true,\"lg\":%u,\"pinned\":%s,\"iters\":%zu,\"seconds\":%.4f,"
           "\"iter_ms\":%.4f,\"h2d_ms\":%.4f,\"kernel_ms\":%.4f,\"d2h_ms\":%.4f}\n",
           lg, pinned ? "true" : "false", iters.size(), total, median(iters), median(ups),
           median(ks), median(downs));
    fflush(stdout);
}

// ------------------------------------------------------------------ main ----

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
    printf("{\"ok\":true,\"ready\":true,\"devices\":%d}\n", ndev);
    fflush(stdout);
    std::string line;
    while (std::getline(std::cin, line)) {
        std::istringstream in(line);
        std::string cmd;
        in >> cmd;
        if (cmd.empty()) continue;
        try {
            if (cmd == "quit") break;
            if (cmd == "info") {
                cmd_info();
            } else if (cmd == "verify") {
                cmd_verify();
            } else if (cmd == "ntt" || cmd == "msm") {
                uint32_t lg = 0;
                int reps = 0;
                if (!(in >> lg >> reps) || lg < 4 || lg > 30 || reps < 1) {
                    fail(cmd + ": expected <lg 4..30> <reps >= 1>");
                    continue;
                }
                if (cmd == "ntt") cmd_ntt(lg, reps);
                else cmd_msm(lg, reps);
            } else if (cmd == "pcie") {
                std::string dir;
                int pinned = 0;
                double secs = 0;
                size_t mib = 0;
                if (!(in >> dir >> pinned >> secs >> mib) || secs <= 0 || mib == 0) {
                    fail("pcie: expected <h2d|d2h|both> <pinned 0|1> <seconds> <mib>");
                    continue;
                }
                cmd_pcie(dir, pinned != 0, secs, mib);
            } else if (cmd == "pipe") {
                uint32_t lg = 0;
                int pinned = 0;
                double secs = 0;
                if (!(in >> lg >> pinned >> secs) || lg < 10 || lg > 29 || secs <= 0) {
                    fail("pipe: expected <lg 10..29> <pinned 0|1> <seconds>");
                    continue;
                }
                cmd_pipe(lg, pinned != 0, secs);
            } else {
                fail("unknown command: " + cmd);
            }
        } catch (const std::exception& ex) {
            (void)cudaGetLastError();
            fail(ex.what());
        }
    }
    if (g_points) (void)cudaFreeHost(g_points);
    return 0;
}
