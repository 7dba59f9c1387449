// encoder/device.h: the --device codec and its resolution. Runs on any
// machine: what "auto" and "cuda" resolve to is checked against what
// CudaDeviceCount() says is here, not against a guess of which machine this is.
#include "encoder/device.h"

#include "encoder/cuda/cuda_backend.h"
#include "gtest/gtest.h"

namespace neodb::encoder {
namespace {

using Kind = DeviceRequest::Kind;

TEST(DeviceTest, ParsesEveryForm) {
  auto cpu = ParseDevice("cpu");
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  EXPECT_EQ(cpu->kind, Kind::kCpu);
  auto cuda = ParseDevice("cuda");
  ASSERT_TRUE(cuda.ok()) << cuda.status();
  EXPECT_EQ(cuda->kind, Kind::kCuda);
  EXPECT_EQ(cuda->index, 0);
  auto cuda3 = ParseDevice("cuda:3");
  ASSERT_TRUE(cuda3.ok()) << cuda3.status();
  EXPECT_EQ(cuda3->kind, Kind::kCuda);
  EXPECT_EQ(cuda3->index, 3);
  EXPECT_EQ(DeviceRequestName(*cuda3), "cuda:3");
  auto cuda12 = ParseDevice("cuda:12");
  ASSERT_TRUE(cuda12.ok()) << cuda12.status();
  EXPECT_EQ(cuda12->index, 12);
  auto autod = ParseDevice("auto");
  ASSERT_TRUE(autod.ok()) << autod.status();
  EXPECT_EQ(autod->kind, Kind::kAuto);
  EXPECT_EQ(DeviceRequestName(*autod), "auto");
}

TEST(DeviceTest, RejectsEverythingElseNamingTheValue) {
  for (const char* bad : {"", "gpu", "CPU", "cuda:", "cuda:x", "cuda:-1", "cuda:+1", "cuda:1x",
                          "cuda1", " cpu", "cuda:99999999999"}) {
    auto r = ParseDevice(bad);
    ASSERT_FALSE(r.ok()) << "'" << bad << "' parsed";
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(std::string("'") + bad + "'"), std::string::npos)
        << r.status();
  }
}

TEST(DeviceTest, CpuResolvesToTheCpu) {
  BackendOptions o;
  o.device = Device::kCuda;
  o.device_index = 2;
  ASSERT_TRUE(ResolveDevice(*ParseDevice("cpu"), &o).ok());
  EXPECT_EQ(o.device, Device::kCpu);
  EXPECT_EQ(o.device_index, 0);
  EXPECT_EQ(BackendDeviceName(o.device, o.device_index), "cpu");
}

TEST(DeviceTest, AutoTakesAGpuExactlyWhenOneIsVisible) {
  BackendOptions o;
  ASSERT_TRUE(ResolveDevice(*ParseDevice("auto"), &o).ok());
  const bool gpu = CudaDeviceCount().ok();
  EXPECT_EQ(o.device, gpu ? Device::kCuda : Device::kCpu);
  EXPECT_EQ(o.device_index, 0);
  EXPECT_EQ(BackendDeviceName(o.device, o.device_index), gpu ? "cuda:0" : "cpu");
}

TEST(DeviceTest, CudaWhereThereIsNoneIsUnavailableNotTheCpu) {
  if (CudaDeviceCount().ok()) GTEST_SKIP() << "a CUDA device is visible here";
  BackendOptions o;
  const absl::Status s = ResolveDevice(*ParseDevice("cuda"), &o);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_NE(s.message().find("no CUDA device"), std::string::npos) << s;
  EXPECT_NE(s.message().find("--device cuda:0"), std::string::npos) << s;
  EXPECT_EQ(o.device, Device::kCpu);  // untouched, not silently "resolved"
  // Each build gives its own reason: a build without CUDA says so; a CUDA
  // build passes on the runtime's (no driver, no device, devices hidden).
  if (CudaBackendCompiled()) {
    EXPECT_EQ(s.message().find("built without CUDA"), std::string::npos) << s;
    EXPECT_TRUE(s.message().find("cudaError") != std::string::npos ||
                s.message().find("reported 0 devices") != std::string::npos)
        << s;
  } else {
    EXPECT_NE(s.message().find("built without CUDA"), std::string::npos) << s;
  }
}

TEST(DeviceTest, ACudaIndexPastTheVisibleDevicesIsRefused) {
  absl::StatusOr<int> count = CudaDeviceCount();
  if (!count.ok()) GTEST_SKIP() << count.status();
  BackendOptions o;
  DeviceRequest r;
  r.kind = Kind::kCuda;
  r.index = *count;
  const absl::Status s = ResolveDevice(r, &o);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  r.index = *count - 1;
  ASSERT_TRUE(ResolveDevice(r, &o).ok());
  EXPECT_EQ(o.device, Device::kCuda);
  EXPECT_EQ(o.device_index, *count - 1);
}

}  // namespace
}  // namespace neodb::encoder
