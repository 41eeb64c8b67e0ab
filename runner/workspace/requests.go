package workspace

// Structured requests the runner and the lifecycle commands act on (see
// the team-requests skill).
const (
	ShutdownRequest      = "shutdown_request"
	ShutdownResponse     = "shutdown_response"
	PlanApprovalRequest  = "plan_approval_request"
	PlanApprovalResponse = "plan_approval_response"
)
