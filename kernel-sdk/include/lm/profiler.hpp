// tt-metal's device profiler macros. The simulator has no device profiler
// yet, so the zones compile and cost nothing; kernels keep their markup.
#pragma once

#define DeviceZoneScopedN(name) static_cast<void>(name)
#define DeviceZoneScopedMainN(name) static_cast<void>(name)
#define DeviceZoneScopedMainChildN(name) static_cast<void>(name)
#define DeviceZoneScopedSumN1(name) static_cast<void>(name)
#define DeviceZoneScopedSumN2(name) static_cast<void>(name)
#define DeviceZoneScoped static_cast<void>(0)
#define DeviceZoneSetCounter(counter) static_cast<void>(counter)
#define DeviceTimestampedData(name, data) static_cast<void>((name, data))
#define DeviceRecordEvent(event_id) static_cast<void>(event_id)
#define DeviceValidateProfiler(condition) static_cast<void>(condition)
