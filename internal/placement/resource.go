package placement

import (
	"encoding/json"
	"time"

	"github.com/stewardhq/steward/pkg/provider"
)

// Resource is one realisation of an order on a provider (API.md, Placement).
type Resource struct {
	// ID is the instance id, shared with the SPRM's service-type instance.
	ID                    string `json:"id"`
	CatalogItemInstanceID string `json:"catalog_item_instance_id"`
	Project               string `json:"project"`
	ServiceType           string `json:"service_type"`
	// Labels are the order's labels, passed to the provider as metadata.
	Labels map[string]string `json:"labels"`
	// OriginalRequest is the intent: the spec as ordered, before policies.
	OriginalRequest map[string]any `json:"original_request"`
	// ValidatedRequest is the spec after the policy chain.
	ValidatedRequest map[string]any `json:"validated_request"`
	ProviderName     string         `json:"provider_name"`
	// PolicyStatus is APPROVED or MODIFIED (policy.StatusApproved, StatusModified).
	PolicyStatus  string          `json:"policy_status"`
	Status        provider.Status `json:"status"`
	StatusMessage string          `json:"status_message"`
	CreateTime    time.Time       `json:"create_time"`
	UpdateTime    time.Time       `json:"update_time"`
	DeletedAt     *time.Time      `json:"deleted_at"`
	// RehydratedFrom is the instance id this resource was rehydrated from
	// (nil for an order's first resource).
	RehydratedFrom *string `json:"rehydrated_from"`
	// RehydrationStatus is RUNNING while the rehydration that created this
	// resource is under way, then DONE or FAILED (nil: not a rehydration).
	RehydrationStatus *string `json:"rehydration_status"`
	// LastRehydration notes the outcome of the last rehydration of this
	// resource that did not start or did not finish (policy rejection,
	// failed create), so the record says why it is still current.
	LastRehydration json.RawMessage `json:"last_rehydration,omitempty"`
}
