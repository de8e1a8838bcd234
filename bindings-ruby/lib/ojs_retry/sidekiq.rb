# frozen_string_literal: true

# Sidekiq on the engine: every failed job is decided by the engine's failure
# transaction (OjsRetry.run_transaction) and carried out with Sidekiq's own
# mechanisms — its retry set, its dead set, its death handlers.
#
#   require "ojs_retry/sidekiq"
#   OjsRetry::Sidekiq.install
#
# installs a client middleware (a job's policy is validated when it is
# pushed, before anything reaches Redis) and a server middleware (a failure
# is decided by the engine instead of Sidekiq's JobRetry). Nothing else
# changes until a policy is given: a worker without `ojs_policy` keeps its
# own `sidekiq_options retry: N` / `retry: false` / `dead: false`, read
# through the engine's `sidekiq` preset. See docs/integrations.md
# ("Sidekiq") for the whole behaviour and why a server middleware.
require "json"
require "sidekiq"
require "sidekiq/api"
require "sidekiq/job_retry"
require "sidekiq/exception_handler"
require "ojs_retry"
require "ojs_retry/job_error"
require "ojs_retry/sidekiq/middleware"

module OjsRetry
  # The Sidekiq integration (see lib/ojs_retry/sidekiq.rb).
  module Sidekiq
    # Where a job carries its policy layer: `sidekiq_options ojs_policy:`
    # and `Worker.set(ojs_policy: ...)` both write it there.
    POLICY_KEY = "ojs_policy"
    # Where a job carries its §10 retry state (JSON text) between attempts.
    STATE_KEY = "ojs_retry_state"
    # Where a dead job carries the engine's dead-letter record (in the
    # dead set).
    DEAD_LETTER_KEY = "ojs_dead_letter"
    # Error history entries kept per job (spec §10.1: at least 10).
    HISTORY_LIMIT = 10
    # The jitter of Sidekiq 6.2.2 to 7.x, `rand(10) * (count + 1)`: the
    # `sidekiq` preset's version "7" (Debian's Sidekiq is 6.4.1).
    PRESET_VERSION = "7"

    # One decision carried out, for listeners (logs, metrics): the queue,
    # the jid, the attempt (1-based), the failure (the keywords given to the
    # engine), the Decision, the failure's time (epoch ms), the engine's
    # notes ([[kind, message], ...]) and the job's payload as stored.
    DecisionEvent = Struct.new(:queue, :job_id, :attempt, :failure, :decision, :at_ms, :notes, :job,
                               keyword_init: true)

    # What `install` was given: the defaults (an Array of policy layers),
    # the listeners, and the exception classes that are timeouts.
    Config = Struct.new(:defaults, :listeners, :timeout_types, keyword_init: true)

    EMPTY = [].freeze
    # The caches below are bounded: a program that makes worker classes or
    # retry options without end starts them again.
    CACHE_LIMIT = 1000
    # Adoption policies, built once per `retry` (see adoption_policy).
    ADOPTIONS = {} # rubocop:disable Style/MutableConstant -- a cache
    # Worker classes' `ojs_policy`, by class (see worker_cache).
    WORKERS = {} # rubocop:disable Style/MutableConstant -- a cache
    private_constant :EMPTY, :CACHE_LIMIT, :ADOPTIONS, :WORKERS

    extend ::Sidekiq::ExceptionHandler

    class << self
      # The configuration `install` set (before it: none, no listeners).
      def config
        @config ||= Config.new(defaults: [], listeners: [], timeout_types: []).freeze
      end

      # Installs the middlewares (the one line of adoption).
      #
      # defaults      - the policy layer(s) under every job's (a Hash, JSON
      #                 text, a RetryPolicy, or an Array of them); with none,
      #                 a worker without `ojs_policy` keeps its Sidekiq
      #                 retry options (the `sidekiq` preset)
      # listeners     - callables given a DecisionEvent after the decision
      #                 was carried out; one that raises is reported to
      #                 Sidekiq's error handlers, never changing the outcome
      # timeout_types - exception classes that mean the job's own time limit
      #                 expired (spec §9.2: retried unless exhausted);
      #                 Sidekiq has no time limit of its own
      #
      # Raises OjsRetry::PolicyError for defaults that are not a policy.
      def install(defaults: nil, listeners: [], timeout_types: [])
        layers = (defaults.is_a?(Array) ? defaults : [defaults].compact).map { |l| plain(l) }
        RetryPolicy.merge(*layers)
        config = Config.new(defaults: layers.freeze, listeners: listeners.dup.freeze,
                            timeout_types: timeout_types.dup.freeze).freeze
        # What every failure hands the engine: each layer as JSON text
        # (validated above; text is what the engine reads fastest).
        @defaults_text = layers.map { |l| text_of(l) }.freeze
        @config = config
        ::Sidekiq.configure_client { |c| c.client_middleware { |ch| add(ch, ClientMiddleware) } }
        ::Sidekiq.configure_server do |c|
          c.client_middleware { |ch| add(ch, ClientMiddleware) }
          # Added last: the innermost, so it sees the job's own exception.
          c.server_middleware { |ch| add(ch, ServerMiddleware) }
        end
        @config
      end

      # The error type of an exception class: its name with its module path
      # (`Net::ReadTimeout`); an anonymous class is named by its nearest
      # named ancestor.
      def error_type_of(klass)
        name = klass.name
        return name if name && !name.empty?

        klass.ancestors.each do |a|
          name = a.is_a?(Class) ? a.name : nil
          return name if name && !name.empty?
        end
        "unknown"
      end

      # The engine's failure keywords for an exception: an OjsRetry::JobError
      # gives its type, code and details; any other its class (see
      # error_type_of) and message.
      def failure_of(exc)
        types = config.timeout_types
        timed_out = !types.empty? && types.any? { |t| exc.is_a?(t) }
        message = message_of(exc)
        return { type: exc.type, code: exc.code, timed_out: timed_out, message: message, details: exc.details } \
          if exc.is_a?(JobError)

        { type: error_type_of(exc.class), timed_out: timed_out, message: message.empty? ? exc.class.to_s : message }
      end

      # [defaults, layer] for the engine: the install defaults and the
      # worker's `sidekiq_options ojs_policy` under the layer the job
      # carries (when it differs from the worker's: `Worker.set`). With none
      # of them, the job's own Sidekiq options through the `sidekiq` preset.
      # Layers given as data are handed over as JSON text, made once per
      # install, worker options and Sidekiq options (see #text_of).
      def layers_of(worker_class, job)
        defaults, layer, = resolve(worker_class, job)
        [defaults, layer]
      end

      # Whether a failure of this job is left to Sidekiq's own JobRetry: no
      # policy anywhere and a `sidekiq_retry_in` block on the worker.
      def native?(worker, job)
        !resolve(worker.class, job)[2] && retry_in_block?(worker)
      end

      # [defaults, layer, given]: #layers_of, and whether any policy was
      # given (false: the `sidekiq` preset of the job's own options).
      def resolve(worker_class, job)
        defaults = @defaults_text || EMPTY
        cached = worker_cache(worker_class)
        carried = job[POLICY_KEY]
        carried = nil if !carried.nil? && cached && same_as_worker?(carried, cached)
        defaults = cached ? defaults + [cached[1]] : defaults
        return [adoption_policy(job), nil, false] if defaults.empty? && carried.nil?

        [defaults, carried, true]
      end

      def retry_in_block?(worker)
        worker.respond_to?(:sidekiq_retry_in_block) && !worker.sidekiq_retry_in_block.nil?
      end

      # The `sidekiq` preset of a job's own retry options, as Sidekiq reads
      # them (JobRetry#retry_attempts_from: an Integer is the retry count,
      # any other true value the global max_retries).
      def adoption_layer(job)
        r = job["retry"]
        r = true unless r == false || r.is_a?(Integer)
        { "preset" => { "system" => "sidekiq", "version" => PRESET_VERSION, "retry" => r,
                        "max_retries" => ::Sidekiq.options.fetch(:max_retries, ::Sidekiq::JobRetry::DEFAULT_MAX_RETRY_ATTEMPTS),
                        "dead" => job["dead"] != false } }
      end

      # The adoption policy of a job as the defaults ([policy]), built once
      # per `retry` value and Sidekiq's max_retries ([max_retries, dead, not
      # dead]): the engine takes a built policy as it is instead of reading
      # a document on every failure.
      def adoption_policy(job)
        r = job["retry"]
        r = true unless r == false || r.is_a?(Integer)
        max = ::Sidekiq.options.fetch(:max_retries, ::Sidekiq::JobRetry::DEFAULT_MAX_RETRY_ATTEMPTS)
        entry = ADOPTIONS[r]
        unless entry && entry[0] == max
          ADOPTIONS.clear if ADOPTIONS.size >= CACHE_LIMIT
          policies = [true, false].map { |dead| [RetryPolicy.new(adoption_layer("retry" => r, "dead" => dead))].freeze }
          entry = ADOPTIONS[r] = [max, *policies].freeze
        end
        entry[job["dead"] == false ? 2 : 1]
      end

      # A layer as plain JSON data (a RetryPolicy as its canonical document).
      def plain(layer)
        layer.is_a?(RetryPolicy) ? JSON.parse(layer.to_json) : layer
      end

      private

      def add(chain, klass)
        chain.add(klass) unless chain.exists?(klass)
      end

      def message_of(exc)
        exc.message.to_s
      rescue StandardError
        +"!!! ERROR MESSAGE THREW AN ERROR !!!"
      end

      # The worker class's `ojs_policy` as [options, text, document] (nil:
      # none), kept while the class's Sidekiq options are the same Hash
      # (`sidekiq_options` replaces it).
      def worker_cache(worker_class)
        klass = worker_class.is_a?(String) ? Object.const_get(worker_class) : worker_class
        return nil unless klass.respond_to?(:get_sidekiq_options)

        options = klass.get_sidekiq_options
        cached = WORKERS[klass]
        return cached[1] if cached&.first.equal?(options)

        layer = options[POLICY_KEY]
        entry = layer.nil? ? nil : [options, text_of(layer), document(layer)].freeze
        WORKERS.clear if WORKERS.size >= CACHE_LIMIT
        WORKERS[klass] = [options, entry].freeze
        entry
      rescue NameError
        nil
      end

      # Whether a carried layer is the worker's own (a worker's options hold
      # Symbol keys; the payload, JSON's String keys; either may be text).
      def same_as_worker?(carried, cached)
        return true if carried.equal?(cached[0][POLICY_KEY]) || carried == cached[2]

        document(carried) == cached[2]
      end

      # A layer as JSON text for the engine, which reads text faster than
      # a Hash: text as it is, plain data (what JSON writes as the same
      # document: String or Symbol keys, strings, numbers within 64 bits,
      # true, false, nil) through JSON, anything else as it is — the engine
      # reads it and refuses what it must.
      def text_of(layer)
        return layer if layer.is_a?(String)

        layer = plain(layer)
        plain_data?(layer) ? JSON.generate(layer).freeze : layer
      rescue JSON::GeneratorError, EncodingError
        layer
      end

      def plain_data?(value, depth = 0)
        return false if depth > 32

        case value
        when Hash
          value.instance_of?(Hash) && value.keys.map(&:to_s).uniq.size == value.size &&
            value.all? { |k, v| (k.is_a?(String) || k.is_a?(Symbol)) && plain_data?(k.to_s) && plain_data?(v, depth + 1) }
        when Array then value.instance_of?(Array) && value.all? { |v| plain_data?(v, depth + 1) }
        when String, Symbol
          text = value.to_s
          text.valid_encoding? && (text.encoding == Encoding::UTF_8 || text.ascii_only?)
        when Integer then value.between?(-2**63, 2**64 - 1)
        when Float then value.finite?
        else value.nil? || value == true || value == false
        end
      end

      def document(layer)
        layer.is_a?(String) ? JSON.parse(layer) : JSON.parse(JSON.generate(plain(layer)))
      rescue JSON::ParserError, JSON::GeneratorError, EncodingError
        layer
      end
    end
  end
end
