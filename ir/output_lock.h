#pragma once
// One writer per output. `perftune tune` locks its output folder and `collect` its log before
// reading or writing anything, so a second process on the same output stops at once (with the
// PID that holds it) instead of measuring every config a second time into the same log.
// flock(2) on a lock file: the kernel releases it when the holder dies, however it dies, so the
// lock file a killed campaign leaves behind never blocks the resume.
#include <string>

namespace perftune {

class OutputLock {
 public:
  // Locks `lock_file` (creating it), `output` naming what it guards in messages. Throws
  // std::runtime_error, one line naming the holder's PID, if another process holds it. In a
  // folder it may not write to and with no lock file there, it holds nothing: no writer can use
  // that folder, and the writer's own error (naming its file) is the one to show.
  OutputLock(const std::string& lock_file, const std::string& output);
  ~OutputLock();
  OutputLock(OutputLock&& other) noexcept;
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;
  OutputLock& operator=(OutputLock&&) = delete;

 private:
  int fd_ = -1;
};

// Creates `folder` (and its parents) if needed, for any command's output. Throws std::runtime_error,
// one line naming the folder, if it is a file or cannot be created (not a raw filesystem_error).
void create_output_folder(const std::string& folder);

// Creates `folder` if needed and locks FOLDER/.perftune.lock. Throws std::runtime_error naming the
// folder if it is a file or cannot be created, and as OutputLock does if it is in use.
OutputLock lock_output_folder(const std::string& folder);

}  // namespace perftune
