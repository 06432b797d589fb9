package console

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"time"
)

// condition is a condition as the API shows it (an order's, an adapter's).
type condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// adapterStatus is one adapter's last report on an order.
type adapterStatus struct {
	Adapter            string      `json:"adapter"`
	ObservedGeneration int64       `json:"observed_generation"`
	ObservedTime       time.Time   `json:"observed_time"`
	Conditions         []condition `json:"conditions"`
}

// orderOperation is an operation on an order (a rehydration, a rotation).
type orderOperation struct {
	ID         string         `json:"id"`
	Done       bool           `json:"done"`
	Metadata   map[string]any `json:"metadata"`
	Error      *apiError      `json:"error"`
	CreateTime time.Time      `json:"create_time"`
}

// appInstance is an order's runtime, for a service type that declares one.
type appInstance struct {
	Runtime struct {
		Kind string `json:"kind"`
	} `json:"runtime"`
	RuntimeState *struct {
		Health          string `json:"health"`
		RepairAvailable *bool  `json:"repair_available"`
		QuorumSafe      *bool  `json:"quorum_safe"`
		Members         []struct {
			ID      string `json:"id"`
			Role    string `json:"role"`
			Health  string `json:"health"`
			Message string `json:"message"`
		} `json:"members"`
		ObservedTime time.Time `json:"observed_time"`
	} `json:"runtime_state"`
	ActiveRepairOperationID *string  `json:"active_repair_operation_id"`
	SuggestedActions        []string `json:"suggested_actions"`
}

// Suggests reports whether the API suggests action for the app instance.
func (a appInstance) Suggests(action string) bool { return slices.Contains(a.SuggestedActions, action) }

// repairOperation is a repair, reconcile or restart with its steps.
type repairOperation struct {
	ID             string  `json:"id"`
	Action         string  `json:"action"`
	Scope          string  `json:"scope"`
	TargetMemberID *string `json:"target_member_id"`
	Status         string  `json:"status"`
	Phase          string  `json:"phase"`
	Steps          []struct {
		Name    string `json:"name"`
		Status  string `json:"status"`
		Message string `json:"message"`
	} `json:"steps"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	NextSafeAction string    `json:"next_safe_action"`
	RequestedBy    string    `json:"requested_by"`
	CreateTime     time.Time `json:"create_time"`
}

// StepsDone counts the operation's finished steps.
func (op repairOperation) StepsDone() int {
	n := 0
	for _, st := range op.Steps {
		if st.Status == "succeeded" || st.Status == "skipped" {
			n++
		}
	}
	return n
}

// orderSections is what the order page shows below the order itself: the
// adapters' reports, the operations on it and, for an app instance, its
// runtime and repair operations.
type orderSections struct {
	Adapters   []adapterStatus
	Operations []orderOperation
	// App is nil for an order whose service type has no runtime.
	App     *appInstance
	Repairs []repairOperation
}

// orderSections reads what the order page shows of o beyond o itself.
func (c *Console) orderSections(r *http.Request, s *session, o orderDetail) (orderSections, error) {
	var out orderSections
	base := "/api/v1/catalog-item-instances/" + url.PathEscape(o.ID)
	var adapters struct {
		Results []adapterStatus `json:"results"`
	}
	if err := c.call(r, s, http.MethodGet, base+"/adapter-statuses?max_page_size=100", nil, &adapters); err != nil {
		return out, err
	}
	out.Adapters = adapters.Results
	var ops struct {
		Results []orderOperation `json:"results"`
	}
	if err := c.call(r, s, http.MethodGet, query("/api/v1/operations", map[string]string{
		"target": "catalog-item-instances/" + o.ID, "max_page_size": "100"}), nil, &ops); err != nil {
		return out, err
	}
	slices.Reverse(ops.Results) // newest first
	out.Operations = ops.Results

	app := "/api/v1/projects/" + url.PathEscape(o.Project) + "/app-instances/" + url.PathEscape(o.ID)
	var a appInstance
	var apiErr *apiError
	switch err := c.call(r, s, http.MethodGet, app, nil, &a); {
	case errors.As(err, &apiErr) && apiErr.Reason == "APP_INSTANCE_NOT_FOUND":
		return out, nil // no runtime
	case err != nil:
		return out, err
	}
	out.App = &a
	var repairs struct {
		Results []repairOperation `json:"results"`
	}
	if err := c.call(r, s, http.MethodGet, app+"/repair-operations?max_page_size=20", nil, &repairs); err != nil {
		return out, err
	}
	out.Repairs = repairs.Results
	return out, nil
}

// repairAction asks for a repair, reconcile or restart of the order's app
// instance and goes back to its page.
func (c *Console) repairAction(w http.ResponseWriter, r *http.Request, s *session) error {
	if err := checkCSRF(r, s); err != nil {
		return err
	}
	id := r.PathValue("id")
	var o orderDetail
	if err := c.call(r, s, http.MethodGet, "/api/v1/catalog-item-instances/"+url.PathEscape(id), nil, &o); err != nil {
		return err
	}
	app := "/api/v1/projects/" + url.PathEscape(o.Project) + "/app-instances/" + url.PathEscape(id)
	action := trimmed(r, "action")
	path, body := app+"/repair", map[string]any{"action": action, "scope": "whole_runtime"}
	switch action {
	case "restart":
		path, body = app+"/restart", nil
	case "repair":
		if member := trimmed(r, "member"); member != "" {
			body["scope"], body["target_member_id"] = "member", member
		}
	}
	var op struct {
		ID string `json:"id"`
	}
	if err := c.call(r, s, http.MethodPost, path, body, &op); err != nil {
		return err
	}
	http.Redirect(w, r, orderURL(s, id, "The "+action+" started (operation "+op.ID+")."), http.StatusSeeOther)
	return nil
}
