package flink

// JobState is a job's state as Flink's REST API names it
// (org.apache.flink.api.common.JobStatus): RUNNING, FINISHED, …. A value
// Flink adds later is kept as it is: only the states named here mean
// anything to skewscope.
type JobState string

// The job states skewscope tells apart (JobStatus).
const (
	JobInitializing JobState = "INITIALIZING"
	JobCreated      JobState = "CREATED"
	JobRunning      JobState = "RUNNING"
	JobFailing      JobState = "FAILING"
	JobFailed       JobState = "FAILED"
	JobCancelling   JobState = "CANCELLING"
	JobCanceled     JobState = "CANCELED"
	JobFinished     JobState = "FINISHED"
	JobRestarting   JobState = "RESTARTING"
	JobSuspended    JobState = "SUSPENDED"
	JobReconciling  JobState = "RECONCILING"
)

// Running reports whether the job is RUNNING: its tasks were deployed and
// its metrics are its own.
func (s JobState) Running() bool { return s == JobRunning }

// GloballyTerminal reports Flink's globally terminal job states
// (JobStatus.isGloballyTerminalState): such a job does not run again under
// its id, and a session cluster lists it until its job store expires it.
func (s JobState) GloballyTerminal() bool {
	return s == JobFinished || s == JobCanceled || s == JobFailed
}

// TaskState is a vertex's or a subtask's execution state as Flink's REST
// API names it (org.apache.flink.runtime.execution.ExecutionState):
// RUNNING, DEPLOYING, …; empty when Flink did not say.
type TaskState string

// The execution states skewscope tells apart (ExecutionState).
const (
	TaskCreated      TaskState = "CREATED"
	TaskScheduled    TaskState = "SCHEDULED"
	TaskDeploying    TaskState = "DEPLOYING"
	TaskInitializing TaskState = "INITIALIZING"
	TaskRunning      TaskState = "RUNNING"
	TaskFinished     TaskState = "FINISHED"
	TaskCanceling    TaskState = "CANCELING"
	TaskCanceled     TaskState = "CANCELED"
	TaskFailed       TaskState = "FAILED"
	TaskReconciling  TaskState = "RECONCILING"
)

// Running reports whether the task is RUNNING.
func (s TaskState) Running() bool { return s == TaskRunning }
